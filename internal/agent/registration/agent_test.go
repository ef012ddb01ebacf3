package registration

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/flotilla/flotilla/internal/logtest"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// fakeSpoke serves the few calls an agent makes to its spoke before it registers: it creates
// the agent namespace, and answers the hub kubeconfig Secret with secret (404 when nil).
func fakeSpoke(t *testing.T, secret *corev1.Secret) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces":
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(&corev1.Namespace{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace},
			})
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespaces/"+DefaultNamespace+"/secrets/"+DefaultSecretName && secret != nil:
			secret.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
			_ = json.NewEncoder(w).Encode(secret)
		default:
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(&metav1.Status{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
				Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound, Message: r.URL.Path + " not found",
			})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// refusingHub answers every request 401, as a hub does to an expired or revoked token.
func refusingHub(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(&metav1.Status{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized, Message: "Unauthorized",
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunRetriesUntilCanceled(t *testing.T) {
	tests := map[string]struct {
		secret *corev1.Secret
		// wantRegisterReason is in the log entry that says why the agent registers.
		wantRegisterReason string
	}{
		"no Secret": {wantRegisterReason: "no hub kubeconfig Secret yet"},
		"a Secret whose kubeconfig has no context": {
			secret: &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: DefaultSecretName},
				Data: map[string][]byte{
					ClusterNameKey: []byte("gpu-east"),
					KubeconfigKey:  []byte("apiVersion: v1\nkind: Config\ncurrent-context: gone\n"),
				},
			},
			wantRegisterReason: `the Secret's kubeconfig has no context "gone"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logs := &logtest.Recorder{}
			hub := refusingHub(t)
			a, err := New(Options{
				ClusterName: "gpu-east", AgentID: "a1",
				Bootstrap: &rest.Config{Host: hub.URL, BearerToken: "expired"},
				Spoke:     &rest.Config{Host: fakeSpoke(t, tc.secret).URL},
				Poll:      10 * time.Millisecond, InitialBackoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond,
				Log: logs.Logger(t, funcr.Options{Verbosity: 1}),
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx) }()

			const refused = "the bootstrap token was refused (401)"
			deadline := time.After(20 * time.Second)
			for len(logs.Find(refused)) < 8 {
				select {
				case err := <-done:
					t.Fatalf("Run returned %v before its context ended", err)
				case <-deadline:
					t.Fatalf("no 8 failures logged with %q; log: %v", refused, logs.Find(""))
				case <-time.After(5 * time.Millisecond):
				}
			}
			select {
			case err := <-done:
				t.Fatalf("Run returned %v before its context ended", err)
			default:
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Run returned %v after cancel, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return within 5s of its context ending")
			}

			failures := logs.Find(refused)
			var delays []time.Duration
			for i, e := range failures[:8] {
				if e["error"] == nil || e["cluster"] != "gpu-east" {
					t.Errorf("failure %d logged without the error or the cluster: %v", i+1, e)
				}
				d, err := time.ParseDuration(e["retryIn"].(string))
				if err != nil {
					t.Fatalf("failure %d: retryIn: %v", i+1, err)
				}
				delays = append(delays, d)
			}
			// 1, 2, 4, 8, 8, ... ms, each with up to 10% jitter.
			for i, d := range delays {
				base := min(time.Millisecond<<i, 8*time.Millisecond)
				if d < base || d > base+base/10+time.Millisecond/2 {
					t.Errorf("delay after failure %d = %s, want %s plus up to 10%%; all: %v", i+1, d, base, delays)
				}
			}
			registering := logs.Find("registering with the hub")
			if len(registering) == 0 || !strings.Contains(registering[0]["reason"].(string), tc.wantRegisterReason) {
				t.Errorf("registering log entries %v, want reason %q", registering, tc.wantRegisterReason)
			}
		})
	}
}
