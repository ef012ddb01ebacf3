package flowerctl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla/flotilla/internal/egress"
)

// fakeLink is a Control API server for one test: it records the last request and answers with
// handler.
type fakeLink struct {
	server  *httptest.Server
	handler http.HandlerFunc
	got     struct{ path, contentType, accept, bodyHex string }
	// authorization is the last request's Authorization header.
	authorization string
}

func newFakeLink(t *testing.T, useTLS bool, handler http.HandlerFunc) (*fakeLink, *Client) {
	t.Helper()
	f := &fakeLink{handler: handler}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.got.path, f.got.contentType, f.got.accept = r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Accept")
		f.got.bodyHex = hex.EncodeToString(body)
		f.authorization = r.Header.Get("Authorization")
		if r.Method != http.MethodPost {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		f.handler(w, r)
	})
	c := &Client{AllowLocal: true} // the fake listens on loopback
	f.server = httptest.NewUnstartedServer(h)
	f.server.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake errors are expected in some tests
	if useTLS {
		f.server.StartTLS()
		pool := x509.NewCertPool()
		pool.AddCert(f.server.Certificate())
		c.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	} else {
		f.server.Start()
	}
	t.Cleanup(f.server.Close)
	t.Cleanup(c.CloseIdleConnections)
	c.Address = f.server.Listener.Addr().String()
	return f, c
}

func answer(contentType string, status int, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

func TestListRunsOverTLS(t *testing.T) {
	f, c := newFakeLink(t, true, answer(protobufType, http.StatusOK, mustHex(t, pythonListRuns)))
	got, err := c.ListRuns(context.Background(), ListRunsOptions{Limit: 100, Skip: 2})
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	if diff := cmp.Diff([]Run{runningRun, finishedRun}, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	wantReq := struct{ path, contentType, accept, bodyHex string }{
		"/v1/control/list-runs", protobufType, protobufType, "10641802",
	}
	if diff := cmp.Diff(wantReq, f.got, cmp.AllowUnexported(wantReq)); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if got[1].StatusText() != "finished:completed" || got[0].StatusText() != "running" {
		t.Errorf("StatusText = %q, %q; want running, finished:completed", got[0].StatusText(), got[1].StatusText())
	}
}

func TestGetRun(t *testing.T) {
	f, c := newFakeLink(t, false, answer(protobufType, http.StatusOK, mustHex(t, pythonListRuns)))
	got, err := c.GetRun(context.Background(), bigRunID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if diff := cmp.Diff(finishedRun, got); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}
	if want := "0890e3deaebef4e7b669"; f.got.bodyHex != want {
		t.Errorf("request body = %s, want %s", f.got.bodyHex, want)
	}
	if _, err := c.GetRun(context.Background(), 5); err == nil || !strings.Contains(err.Error(), "does not contain that run") {
		t.Errorf("GetRun of a run missing from the answer: error = %v", err)
	}
}

func TestLogs(t *testing.T) {
	chunks := [][]byte{
		frame(encodeStreamLogsResponse(logChunk{Output: "[ROUND 1/1]\n", Latest: 100.5})),
		frame(encodeStreamLogsResponse(logChunk{Output: "FLOTILLA_PROGRESS {}\n", Latest: 101.25})),
	}
	tests := map[string]struct {
		hold    bool // keep the stream open after the chunks, as for a running run
		want    Log
		wantReq string
	}{
		"stream ended: run finished": {
			want:    Log{Text: "[ROUND 1/1]\nFLOTILLA_PROGRESS {}\n", Latest: 101.25, Complete: true},
			wantReq: "0807110000000000005940", // run_id 7, after_timestamp 100
		},
		"deadline cuts an open stream: no error": {
			hold:    true,
			want:    Log{Text: "[ROUND 1/1]\nFLOTILLA_PROGRESS {}\n", Latest: 101.25},
			wantReq: "0807110000000000005940",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			handlerDone := make(chan struct{})
			f, c := newFakeLink(t, false, func(w http.ResponseWriter, r *http.Request) {
				defer close(handlerDone)
				w.Header().Set("Content-Type", protobufStreamType)
				for _, ch := range chunks {
					_, _ = w.Write(ch)
					w.(http.Flusher).Flush()
				}
				if tc.hold {
					<-r.Context().Done() // the client went away
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			got, err := c.Logs(ctx, 7, 100)
			if err != nil {
				t.Fatalf("Logs: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if f.got.path != "/v1/control/stream-logs" || f.got.accept != protobufStreamType || f.got.bodyHex != tc.wantReq {
				t.Errorf("request = %+v, want path /v1/control/stream-logs, accept %s, body %s", f.got, protobufStreamType, tc.wantReq)
			}
			select { // the server must see the stream end, as the SuperLink's generator must stop
			case <-handlerDone:
			case <-time.After(5 * time.Second):
				t.Fatal("the server's handler still runs 5 s after Logs returned")
			}
		})
	}
}

func TestErrors(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	tests := map[string]struct {
		handler   http.HandlerFunc
		serverTLS bool
		clientTLS bool   // a client with TLS against a plain server: give it any config
		address   string // replaces the server's address when set
		call      func(context.Context, *Client) error
		want      *Error // compared without Address and Err
		wantIn    []string
		notFound  bool
	}{
		"run not found": {
			handler:  answer("application/json", http.StatusNotFound, []byte(`{"code":16,"detail":"Run ID not found."}`)),
			call:     getRun,
			want:     &Error{Method: "ListRuns", HTTPStatus: 404, Code: 16, Detail: "Run ID not found."},
			wantIn:   []string{"flower SuperLink 127.0.0.1:", ": ListRuns: HTTP 404: Run ID not found. (Flower error code 16)"},
			notFound: true,
		},
		"logs of an unknown run": {
			handler:  answer("application/json", http.StatusNotFound, []byte(`{"code":16,"detail":"Run ID not found."}`)),
			call:     logs,
			want:     &Error{Method: "StreamLogs", HTTPStatus: 404, Code: 16, Detail: "Run ID not found."},
			notFound: true,
		},
		"FastAPI validation error": {
			handler: answer("application/json", http.StatusUnprocessableEntity, []byte(`{"detail":[{"loc":["body"],"msg":"bad"}]}`)),
			call:    listRuns,
			want:    &Error{Method: "ListRuns", HTTPStatus: 422, Detail: `[{"loc":["body"],"msg":"bad"}]`},
		},
		"non-JSON error body": {
			handler: answer("text/plain", http.StatusBadGateway, []byte("upstream\x00down\n")),
			call:    listRuns,
			want:    &Error{Method: "ListRuns", HTTPStatus: 502, Detail: "upstream down"},
		},
		"empty error body": {
			handler: answer("text/plain", http.StatusServiceUnavailable, nil),
			call:    listRuns,
			want:    &Error{Method: "ListRuns", HTTPStatus: 503, Detail: "Service Unavailable"},
		},
		"not a SuperLink": {
			handler: answer("text/html", http.StatusOK, []byte("<html>")),
			call:    listRuns,
			wantIn:  []string{`Content-Type "text/html", want "application/protobuf": is 127.0.0.1:`, "Flower 1.42 or newer SuperLink?"},
		},
		"malformed answer": {
			handler: answer(protobufType, http.StatusOK, []byte{0x0a, 0x09}),
			call:    listRuns,
			wantIn:  []string{"ListRuns: malformed answer: ListRunsResponse field 1: ", "unexpected EOF"},
		},
		"answer over MaxMessageBytes": {
			handler: answer(protobufType, http.StatusOK, mustHex(t, pythonListRuns)),
			call: func(ctx context.Context, c *Client) error {
				c.MaxMessageBytes = 100
				return listRuns(ctx, c)
			},
			wantIn: []string{"the answer is larger than 100 bytes; raise Client.MaxMessageBytes"},
		},
		"deadline before the stream opens": {
			handler: slow,
			call:    logs,
			wantIn:  []string{"StreamLogs: request failed: Post ", "context deadline exceeded"},
		},
		"plain client, TLS SuperLink": { // Go's server answers 400; uvicorn closes (integration test)
			handler:   answer(protobufType, http.StatusOK, nil),
			serverTLS: true,
			call:      listRuns,
			want:      &Error{Method: "ListRuns", HTTPStatus: 400, Detail: "Client sent an HTTP request to an HTTPS server."},
		},
		"TLS client, plain SuperLink": {
			handler:   answer(protobufType, http.StatusOK, nil),
			clientTLS: true,
			call:      listRuns,
			wantIn:    []string{"speaks plain HTTP (started with --insecure): leave Client.TLS nil"},
		},
		"address with a scheme": {
			handler: answer(protobufType, http.StatusOK, nil),
			address: "https://link:8000",
			call:    listRuns,
			wantIn:  []string{`Client.Address "https://link:8000" is not host:port`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, c := newFakeLink(t, tc.serverTLS, tc.handler)
			if tc.serverTLS {
				c.TLS = nil
			}
			if tc.clientTLS {
				c.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			if tc.address != "" {
				c.Address = tc.address
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err := tc.call(ctx, c)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error = %v (%T), want an *Error", err, err)
			}
			if e.Address != c.Address {
				t.Errorf("Error.Address = %q, want %q", e.Address, c.Address)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, e, cmpopts.IgnoreFields(Error{}, "Address", "Err")); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(errText(err), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if IsNotFound(err) != tc.notFound {
				t.Errorf("IsNotFound = %v, want %v", !tc.notFound, tc.notFound)
			}
		})
	}
}

func listRuns(ctx context.Context, c *Client) error {
	_, err := c.ListRuns(ctx, ListRunsOptions{})
	return err
}

func getRun(ctx context.Context, c *Client) error {
	_, err := c.GetRun(ctx, 9)
	return err
}

func logs(ctx context.Context, c *Client) error {
	_, err := c.Logs(ctx, 9, 0)
	return err
}

// The built-in client reaches the address given and nothing else: no proxy from the environment
// (it would dial on the client's behalf, past the address check), no redirect followed, and no
// loopback address dialed unless AllowLocal.
func TestBuiltinClientIsGuarded(t *testing.T) {
	var redirected []string
	target := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		redirected = append(redirected, r.URL.Path)
	}))
	t.Cleanup(target.Close)
	_, c := newFakeLink(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	if tr := c.httpClient().Transport.(*http.Transport); tr.Proxy != nil {
		t.Errorf("the built-in transport has a proxy function; want none")
	}
	_, err := c.ListRuns(context.Background(), ListRunsOptions{})
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Errorf("ListRuns from a SuperLink that redirects: %v, want refused", err)
	}
	if len(redirected) != 0 {
		t.Errorf("the redirect's target got %v, want nothing", redirected)
	}
	strict := &Client{Address: c.Address}
	t.Cleanup(strict.CloseIdleConnections)
	if _, err := strict.ListRuns(context.Background(), ListRunsOptions{}); !errors.Is(err, egress.ErrRefused) {
		t.Errorf("ListRuns from %s without AllowLocal: %v, want refused", c.Address, err)
	}
}
