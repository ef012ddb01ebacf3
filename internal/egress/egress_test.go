package egress

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckURL(t *testing.T) {
	for name, tc := range map[string]struct {
		url         string
		allowLocal  bool
		wantRefused bool
	}{
		"service":                      {url: "http://scorer.scoring.svc:8080/config"},
		"private address":              {url: "http://10.0.0.7:8080/config"},
		"loopback":                     {url: "http://127.0.0.1:8080/", wantRefused: true},
		"loopback allowed":             {url: "http://127.0.0.1:8080/", allowLocal: true},
		"localhost":                    {url: "http://localhost:8080/", wantRefused: true},
		"ipv6 loopback":                {url: "http://[::1]:8080/", wantRefused: true},
		"ipv4-mapped loopback":         {url: "http://[::ffff:127.0.0.1]:8080/", wantRefused: true},
		"unspecified":                  {url: "http://0.0.0.0:8080/", wantRefused: true},
		"link-local":                   {url: "http://169.254.10.1/", wantRefused: true},
		"ipv6 link-local":              {url: "http://[fe80::1]/", wantRefused: true},
		"metadata":                     {url: "http://169.254.169.254/latest/meta-data/", wantRefused: true},
		"metadata even when allowed":   {url: "http://169.254.169.254/latest/meta-data/", allowLocal: true, wantRefused: true},
		"aws ipv6 metadata":            {url: "http://[fd00:ec2::254]/", allowLocal: true, wantRefused: true},
		"gcp metadata name":            {url: "http://metadata.google.internal./computeMetadata/v1/", allowLocal: true, wantRefused: true},
		"not http":                     {url: "file:///etc/passwd", allowLocal: true, wantRefused: true},
		"link-local allowed":           {url: "http://169.254.10.1/", allowLocal: true},
		"ipv6 link-local when allowed": {url: "http://[fe80::1]/", allowLocal: true},
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckURL(tc.url, tc.allowLocal)
			if got := errors.Is(err, ErrRefused); got != tc.wantRefused {
				t.Errorf("CheckURL(%q, %v) = %v, want refused %v", tc.url, tc.allowLocal, err, tc.wantRefused)
			}
		})
	}
}

// The dialler checks the resolved address: a name that resolves to loopback is refused.
func TestDialChecksResolvedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	port := netip.MustParseAddrPort(srv.Listener.Addr().String()).Port()
	// "localhost" passes no name check here (CheckURL is not called): only the dialler sees it.
	u := "http://localhost:" + strconv.Itoa(int(port)) + "/healthz"
	for name, tc := range map[string]struct {
		allowLocal  bool
		wantRefused bool
	}{
		"refused":          {wantRefused: true},
		"allowed (option)": {allowLocal: true},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := Client(time.Second, tc.allowLocal, nil).Get(u)
			if err == nil {
				_ = resp.Body.Close()
			}
			if got := errors.Is(err, ErrRefused); got != tc.wantRefused {
				t.Errorf("GET %s: %v, want refused %v", u, err, tc.wantRefused)
			}
		})
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, r.URL.Path+" "+r.Header.Get("Authorization"))
		if r.URL.Path == "/scoring" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/scoring", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := Do(context.Background(), Client(time.Second, true, nil), req, true)
	if err == nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, ErrRefused) {
		t.Errorf("a redirect: %v, want refused", err)
	}
	if diff := cmp.Diff([]string{"/scoring Bearer secret"}, hits); diff != "" {
		t.Errorf("requests the server saw (-want +got):\n%s", diff)
	}
}
