package flowerfront

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seen is what the fake SuperLink received of one request.
type seen struct {
	Method, Path  string
	Authorization string
	// Forwarded holds the request's X-Forwarded-*, Forwarded and X-Real-Ip headers, joined.
	Forwarded map[string]string
	// FlwrSignature is Flower's own credential header, which must pass untouched.
	FlwrSignature string
}

// fakeSuperLink records every request it gets and answers 200 "from flower".
type fakeSuperLink struct {
	mu  sync.Mutex
	got []seen
	url *url.URL
}

func newFakeSuperLink(t *testing.T) *fakeSuperLink {
	t.Helper()
	f := &fakeSuperLink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{Method: r.Method, Path: r.URL.EscapedPath(), Authorization: strings.Join(r.Header.Values("Authorization"), ","),
			FlwrSignature: r.Header.Get("Flwr-Signature")}
		for k, v := range r.Header {
			if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-forwarded") || lk == "forwarded" || lk == "x-real-ip" {
				if s.Forwarded == nil {
					s.Forwarded = map[string]string{}
				}
				s.Forwarded[k] = strings.Join(v, ",")
			}
		}
		f.mu.Lock()
		f.got = append(f.got, s)
		f.mu.Unlock()
		_, _ = io.WriteString(w, "from flower")
	}))
	t.Cleanup(srv.Close)
	f.url, _ = url.Parse(srv.URL)
	return f
}

func (f *fakeSuperLink) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.got...)
}

const hubToken = "hub-token-0123"

// The client's address as httptest.NewRequest gives it, and what the front forwards for it.
var frontForwarded = map[string]string{"X-Forwarded-For": "192.0.2.1", "X-Forwarded-Host": "front.example", "X-Forwarded-Proto": "http"}

func TestHandler(t *testing.T) {
	bearer := func(s string) http.Header { return http.Header{"Authorization": {s}} }
	tests := map[string]struct {
		method, target string
		header         http.Header
		token          *string // the front's configured token; nil means hubToken
		wantStatus     int
		wantBody       string // a part of the answer's body
		wantUpstream   *seen  // nil: the SuperLink must get nothing
	}{
		"fleet forwarded with Flower's signature": {
			method: "POST", target: "/v1/fleet/pull-messages", header: http.Header{"Flwr-Signature": {"c2ln"}},
			wantStatus: 200, wantBody: "from flower",
			wantUpstream: &seen{Method: "POST", Path: "/v1/fleet/pull-messages", FlwrSignature: "c2ln", Forwarded: frontForwarded},
		},
		"runtime forwarded": {
			method: "POST", target: "/v1/runtime/acquire-task",
			wantStatus: 200, wantUpstream: &seen{Method: "POST", Path: "/v1/runtime/acquire-task", Forwarded: frontForwarded},
		},
		"health forwarded": {
			method: "GET", target: "/health",
			wantStatus: 200, wantUpstream: &seen{Method: "GET", Path: "/health", Forwarded: frontForwarded},
		},
		"the hub's token is stripped from a fleet request too": {
			method: "POST", target: "/v1/fleet/send-node-heartbeat", header: bearer("Bearer " + hubToken),
			wantStatus: 200, wantUpstream: &seen{Method: "POST", Path: "/v1/fleet/send-node-heartbeat", Forwarded: frontForwarded},
		},
		"client's forwarding headers are replaced": {
			method: "POST", target: "/v1/fleet/pull-messages",
			header: http.Header{"X-Forwarded-For": {"6.6.6.6"}, "X-Forwarded-Proto": {"https"}, "X-Forwarded-Port": {"1"},
				"X-Forwarded-Prefix": {"/x"}, "Forwarded": {"for=6.6.6.6"}, "X-Real-Ip": {"6.6.6.6"}},
			wantStatus: 200, wantUpstream: &seen{Method: "POST", Path: "/v1/fleet/pull-messages", Forwarded: frontForwarded},
		},
		"control without a token": {
			method: "POST", target: "/v1/control/list-runs",
			wantStatus: 403, wantBody: "reachable only by the Flotilla hub",
		},
		"control with a wrong token": {
			method: "POST", target: "/v1/control/list-runs", header: bearer("Bearer not-the-hub"),
			wantStatus: 403, wantBody: "kubectl port-forward",
		},
		"control with the token as a prefix of the hub's": {
			method: "POST", target: "/v1/control/list-runs", header: bearer("Bearer " + hubToken[:5]), wantStatus: 403,
		},
		"control with the token under another scheme": {
			method: "POST", target: "/v1/control/list-runs", header: bearer("Basic " + hubToken), wantStatus: 403,
		},
		"control with the token twice": {
			method: "POST", target: "/v1/control/list-runs",
			header: http.Header{"Authorization": {"Bearer " + hubToken, "Bearer " + hubToken}}, wantStatus: 403,
		},
		"control with the hub's token: forwarded without it": {
			method: "POST", target: "/v1/control/start-run", header: bearer("Bearer " + hubToken),
			wantStatus: 200, wantUpstream: &seen{Method: "POST", Path: "/v1/control/start-run", Forwarded: frontForwarded},
		},
		"the scheme's case does not matter": {
			method: "POST", target: "/v1/control/list-runs", header: bearer("bearer " + hubToken),
			wantStatus: 200, wantUpstream: &seen{Method: "POST", Path: "/v1/control/list-runs", Forwarded: frontForwarded},
		},
		"empty configured token refuses an empty bearer": {
			method: "POST", target: "/v1/control/list-runs", header: bearer("Bearer "), token: ptr(""), wantStatus: 403,
		},
		"empty configured token refuses any bearer": {
			method: "POST", target: "/v1/control/list-runs", header: bearer("Bearer " + hubToken), token: ptr(""), wantStatus: 403,
		},
		"unknown API":                    {method: "POST", target: "/v1/other/list", wantStatus: 404, wantBody: "Fleet API (/v1/fleet/)"},
		"a SuperNode registering itself": {method: "POST", target: "/v1/fleet/register-node", wantStatus: 403, wantBody: "the Flotilla hub registers"},
		"a SuperNode unregistering itself": {method: "POST", target: "/v1/fleet/unregister-node", header: bearer("Bearer " + hubToken),
			wantStatus: 403, wantBody: "the Flotilla hub registers"},
		"root":                          {method: "GET", target: "/", wantStatus: 404},
		"FastAPI's docs":                {method: "GET", target: "/docs", wantStatus: 404},
		"FastAPI's schema":              {method: "GET", target: "/openapi.json", wantStatus: 404},
		"a prefix alone":                {method: "POST", target: "/v1/fleet", wantStatus: 404},
		"control prefix alone":          {method: "POST", target: "/v1/control", wantStatus: 404},
		"case differs":                  {method: "POST", target: "/V1/CONTROL/list-runs", wantStatus: 404},
		"dot-dot from fleet to control": {method: "POST", target: "/v1/fleet/../control/list-runs", wantStatus: 400, wantBody: "clean form"},
		"dot-dot at the end":            {method: "POST", target: "/v1/fleet/x/..", wantStatus: 400},
		"dot segment":                   {method: "POST", target: "/v1/fleet/./pull-messages", wantStatus: 400},
		"double slash":                  {method: "POST", target: "/v1/fleet//pull-messages", wantStatus: 400},
		"trailing slash":                {method: "POST", target: "/v1/fleet/pull-messages/", wantStatus: 400},
		"encoded slash":                 {method: "POST", target: "/v1/control%2Flist-runs", wantStatus: 400},
		"encoded dot-dot under fleet": {
			method: "POST", target: "/v1/fleet/%2e%2e/control/list-runs", wantStatus: 400,
		},
		"encoded slashes under fleet": {
			method: "POST", target: "/v1/fleet%2F..%2Fcontrol%2Flist-runs", wantStatus: 400,
		},
		"encoded letter":  {method: "POST", target: "/v1/%63ontrol/list-runs", wantStatus: 400},
		"backslash":       {method: "POST", target: `/v1/fleet/..\control\list-runs`, wantStatus: 400},
		"encoded control": {method: "POST", target: "/v1/fleet/x%00", wantStatus: 400},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			link := newFakeSuperLink(t)
			token := hubToken
			if tc.token != nil {
				token = *tc.token
			}
			req := httptest.NewRequest(tc.method, "http://front.example"+tc.target, strings.NewReader("body"))
			for k, v := range tc.header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			Handler(link.url, []byte(token)).ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", rec.Code, tc.wantStatus, rec.Body.String())
			}
			if !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("body %q does not contain %q", rec.Body.String(), tc.wantBody)
			}
			var want []seen
			if tc.wantUpstream != nil {
				want = []seen{*tc.wantUpstream}
			}
			if diff := cmp.Diff(want, link.requests()); diff != "" {
				t.Errorf("what the SuperLink got (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// A streamed answer (the Control API's stream-logs) reaches the caller chunk by chunk, as the
// SuperLink writes it, over HTTP/1.1 and HTTP/2. Go's proxy flushes a chunked answer by itself;
// one with a Content-Length flows only because the front flushes every write.
func TestHandlerStreams(t *testing.T) {
	tests := map[string]struct{ h2, contentLength bool }{
		"HTTP/1.1, chunked":          {},
		"HTTP/2, chunked":            {h2: true},
		"HTTP/1.1, a Content-Length": {contentLength: true},
		"HTTP/2, a Content-Length":   {h2: true, contentLength: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h2 := tc.h2
			release := make(chan struct{})
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/flower-protobuf-stream")
				if tc.contentLength {
					w.Header().Set("Content-Length", "13") // "first\n" + "second\n"
				}
				_, _ = io.WriteString(w, "first\n")
				w.(http.Flusher).Flush()
				select { // the rest only once the caller has read the first chunk
				case <-release:
				case <-r.Context().Done():
					return
				}
				_, _ = io.WriteString(w, "second\n")
			}))
			t.Cleanup(upstream.Close)
			u, _ := url.Parse(upstream.URL)
			front := httptest.NewUnstartedServer(Handler(u, []byte(hubToken)))
			front.EnableHTTP2 = h2
			front.StartTLS()
			t.Cleanup(front.Close)

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", front.URL+"/v1/control/stream-logs", strings.NewReader(""))
			req.Header.Set("Authorization", "Bearer "+hubToken)
			resp, err := front.Client().Do(req)
			if err != nil {
				t.Fatalf("the answer did not start while the SuperLink held the stream open (does the front buffer?): %v", err)
			}
			defer func() { _ = resp.Body.Close() }()
			if resp.StatusCode != 200 || (resp.ProtoMajor == 2) != h2 {
				t.Fatalf("answer %s over %s, want 200 over HTTP/2: %v", resp.Status, resp.Proto, h2)
			}
			body := bufio.NewReader(resp.Body)
			first := make(chan string, 1)
			go func() {
				line, _ := body.ReadString('\n')
				first <- line
			}()
			select {
			case line := <-first:
				if line != "first\n" {
					t.Fatalf("first chunk %q, want %q", line, "first\n")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the first chunk did not arrive while the SuperLink held the stream open: the front buffers")
			}
			close(release)
			rest, err := io.ReadAll(body)
			if err != nil || string(rest) != "second\n" {
				t.Fatalf("rest of the stream %q, %v; want %q", rest, err, "second\n")
			}
		})
	}
}

// A SuperLink that does not answer gives the caller 502 with a hint, not a hang.
func TestHandlerUpstreamDown(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(down.URL)
	down.Close()
	rec := httptest.NewRecorder()
	Handler(u, []byte(hubToken)).ServeHTTP(rec, httptest.NewRequest("POST", "/v1/fleet/pull-messages", nil))
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "SuperLink container's log") {
		t.Errorf("answer %d %q, want 502 naming the SuperLink's log", rec.Code, rec.Body.String())
	}
}

func TestClassify(t *testing.T) {
	tests := map[string]route{
		"/health":                           routeOpen,
		"/v1/fleet/pull-messages":           routeOpen,
		"/v1/runtime/push-task-output":      routeOpen,
		"/v1/runtime/responses":             routeOpen,
		"/v1/control/stream-logs":           routeControl,
		"/v1/control/register-node":         routeControl,
		"/v1/fleet/register-node":           routeRegistration,
		"/v1/fleet/unregister-node":         routeRegistration,
		"/v1/fleet/activate-node":           routeOpen,
		"/v1/fleet":                         routeNotFound,
		"/health/x":                         routeNotFound,
		"/healthz":                          routeNotFound,
		"/":                                 routeNotFound,
		"":                                  routeBadPath,
		"*":                                 routeBadPath,
		"v1/fleet/x":                        routeBadPath,
		"/v1/fleet/../control/list-runs":    routeBadPath,
		"/v1/fleet/x/":                      routeBadPath,
		"/v1//control/list-runs":            routeBadPath,
		"/v1/control%2Flist-runs":           routeBadPath,
		`/v1/fleet\..\control\list-runs`:    routeBadPath,
		"/v1/fleet/%2e%2e/control/list-run": routeBadPath,
	}
	for p, want := range tests {
		if got := classify(p); got != want {
			t.Errorf("classify(%q) = %d, want %d", p, got, want)
		}
	}
}
