package flowerfront

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/certs"
)

// frontFiles writes a serving certificate for 127.0.0.1 (from a CA made here), its key and a
// token file, and returns Options naming them and the CA to trust.
func frontFiles(t *testing.T, token string) (Options, *x509.CertPool) {
	t.Helper()
	now := time.Now()
	ca, err := certs.NewCA("flower-front-test-ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: "flower-front"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{
		CertFile:         filepath.Join(dir, "tls.crt"),
		KeyFile:          filepath.Join(dir, "tls.key"),
		ControlTokenFile: filepath.Join(dir, "token"),
	}
	for file, data := range map[string][]byte{o.CertFile: certPEM, o.KeyFile: keyPEM, o.ControlTokenFile: []byte(token)} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	return o, pool
}

// freeAddress is a loopback address whose port was free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func TestRun(t *testing.T) {
	link := newFakeSuperLink(t)
	o, pool := frontFiles(t, hubToken+"\n") // a token file as `echo` writes it
	o.Listen, o.Upstream = freeAddress(t), link.url.String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o) }()
	waitForTLS(t, o.Listen, pool, done)

	base := "https://" + o.Listen
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}}
	defer h2.CloseIdleConnections()
	defer h1.CloseIdleConnections()
	type answer struct {
		Status int
		Proto  string
	}
	var got []answer
	for _, c := range []struct {
		client *http.Client
		path   string
		token  string
	}{
		{h2, "/v1/fleet/pull-messages", ""},
		{h1, "/v1/runtime/acquire-task", ""},
		{h2, "/v1/control/list-runs", ""},
		{h2, "/v1/control/list-runs", hubToken},
		{h1, "/v1/control/list-runs", hubToken + "x"},
	} {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+c.path, strings.NewReader(""))
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", c.path, err)
		}
		_ = resp.Body.Close()
		got = append(got, answer{resp.StatusCode, resp.Proto})
	}
	want := []answer{{200, "HTTP/2.0"}, {200, "HTTP/1.1"}, {403, "HTTP/2.0"}, {200, "HTTP/2.0"}, {403, "HTTP/1.1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	wantSeen := []seen{{Method: "POST", Path: "/v1/fleet/pull-messages"}, {Method: "POST", Path: "/v1/runtime/acquire-task"},
		{Method: "POST", Path: "/v1/control/list-runs"}}
	for i := range wantSeen {
		wantSeen[i].Forwarded = map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Host": o.Listen, "X-Forwarded-Proto": "https"}
	}
	if diff := cmp.Diff(wantSeen, link.requests()); diff != "" {
		t.Errorf("what the SuperLink got (-want +got):\n%s", diff)
	}

	old := &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}
	if conn, err := tls.Dial("tcp", o.Listen, old); err == nil {
		_ = conn.Close()
		t.Errorf("a TLS 1.1 client was served; want TLS 1.2 at least")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after its context ended: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still serves 10 s after its context ended")
	}
	if conn, err := net.Dial("tcp", o.Listen); err == nil {
		_ = conn.Close()
		t.Errorf("%s still accepts connections after Run returned", o.Listen)
	}
}

// waitForTLS waits until addr completes a TLS handshake, or fails if Run returned.
func waitForTLS(t *testing.T, addr string, pool *x509.CertPool, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
		if err == nil {
			_ = conn.Close()
			return
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned before serving: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no TLS handshake with %s after 10 s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunRefusesBadOptions(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	valid, _ := frontFiles(t, hubToken)
	valid.Listen, valid.Upstream = "127.0.0.1:0", "http://127.0.0.1:9091"
	other, _ := frontFiles(t, hubToken) // another certificate's key
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := map[string]struct {
		change func(*Options)
		want   []string // parts of the error, in order
	}{
		"no listen":             {func(o *Options) { o.Listen = "" }, []string{"--listen is required", "e.g. :9093"}},
		"listen not host:port":  {func(o *Options) { o.Listen = "9093" }, []string{`--listen "9093" is not HOST:PORT`}},
		"listen on a busy port": {func(o *Options) { o.Listen = busy.Addr().String() }, []string{"--listen " + busy.Addr().String(), "address already in use"}},
		"no upstream":           {func(o *Options) { o.Upstream = "" }, []string{"--upstream is required", "http://127.0.0.1:PORT"}},
		"upstream without http": {func(o *Options) { o.Upstream = "127.0.0.1:9091" }, []string{`--upstream "127.0.0.1:9091"`, "http://127.0.0.1:PORT"}},
		"upstream over https":   {func(o *Options) { o.Upstream = "https://127.0.0.1:9091" }, []string{`scheme "https" is not http`}},
		"upstream without port": {func(o *Options) { o.Upstream = "http://127.0.0.1" }, []string{`--upstream "http://127.0.0.1" has no HOST:PORT`}},
		"upstream with a path":  {func(o *Options) { o.Upstream = "http://127.0.0.1:9091/v1" }, []string{"--upstream", "a path"}},
		"no certificate":        {func(o *Options) { o.CertFile = "" }, []string{"--tls-cert-file is required"}},
		"no key":                {func(o *Options) { o.KeyFile = "" }, []string{"--tls-key-file is required"}},
		"missing certificate":   {func(o *Options) { o.CertFile = filepath.Join(dir, "none") }, []string{"--tls-cert-file", "no such file"}},
		"key of another cert":   {func(o *Options) { o.KeyFile = other.KeyFile }, []string{"--tls-cert-file", "--tls-key-file", "does not match"}},
		"no token file":         {func(o *Options) { o.ControlTokenFile = "" }, []string{"--control-token-file is required"}},
		"missing token file":    {func(o *Options) { o.ControlTokenFile = filepath.Join(dir, "none") }, []string{"--control-token-file", "no such file"}},
		"empty token file":      {func(o *Options) { o.ControlTokenFile = file("empty", "") }, []string{"--control-token-file", "is empty", "write the hub's bearer token"}},
		"only a newline":        {func(o *Options) { o.ControlTokenFile = file("newline", "\r\n") }, []string{"is empty"}},
		"token with a space":    {func(o *Options) { o.ControlTokenFile = file("space", "a b\n") }, []string{"space or control character at byte 1"}},
		"two lines":             {func(o *Options) { o.ControlTokenFile = file("lines", "a\nb\n") }, []string{"space or control character at byte 1"}},
		"everything left out, at once": {
			func(o *Options) { *o = Options{} },
			[]string{"--listen is required", "--upstream is required", "--tls-cert-file is required", "--tls-key-file is required", "--control-token-file is required"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := valid
			tc.change(&o)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := Run(ctx, o)
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Run = %v, want an error at start", err)
			}
			msg := err.Error()
			for _, part := range tc.want {
				i := strings.Index(msg, part)
				if i < 0 {
					t.Fatalf("error %q does not contain %q (in order)", err, part)
				}
				msg = msg[i+len(part):]
			}
		})
	}
}
