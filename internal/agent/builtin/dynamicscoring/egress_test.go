package dynamicscoring

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

// recorder is a server that records the requests it gets and their Authorization.
type recorder struct {
	mu   sync.Mutex
	got  []string
	srv  *httptest.Server
	next http.HandlerFunc
}

func newRecorder(t *testing.T, next http.HandlerFunc) *recorder {
	r := &recorder{next: next}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got = append(r.got, req.Method+" "+req.URL.Path+" "+req.Header.Get("Authorization"))
		r.mu.Unlock()
		r.next(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// The agent sends a scorer's token only to the endpoint the hub lists: never on through a
// redirect, and never to a loopback address unless allowed.
func TestScoringEgress(t *testing.T) {
	elsewhere := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"results":[]}`)) })
	scorer := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, elsewhere.srv.URL+"/scoring", http.StatusTemporaryRedirect)
			return
		}
		_, _ = w.Write([]byte(`{"results":[{"metric":{},"score":42}]}`))
	})
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: "scorer-token"},
		Data: map[string][]byte{"token": []byte("s3cret")}}
	for name, tc := range map[string]struct {
		path          string
		allowLocal    bool
		wantReason    string
		wantScorer    []string
		wantElsewhere []string
	}{
		"loopback allowed": {path: "/scoring", allowLocal: true, wantReason: "",
			wantScorer: []string{"POST /scoring Bearer s3cret"}},
		"loopback refused without the option": {path: "/scoring", wantReason: ReasonScorerUnreachable},
		"redirect not followed": {path: "/moved", allowLocal: true, wantReason: ReasonScorerUnreachable,
			wantScorer: []string{"POST /moved Bearer s3cret"}},
	} {
		t.Run(name, func(t *testing.T) {
			scorer.got, elsewhere.got = nil, nil
			a := AddOn{Timeout: time.Second, AllowLocal: tc.allowLocal}
			r := &runner{
				env: builtin.Env{ClusterName: "east", Hub: fake.NewClientBuilder().WithScheme(scheme.Scheme).Build(),
					Clock: clocktesting.NewFakeClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)), Log: logr.Discard()},
				spoke: kubefake.NewClientset(token), http: a.httpClient(), allowLocal: a.AllowLocal,
			}
			s := scoringwire.Summary{Namespace: "ns", Name: "gpu", ScoreName: "gpu", SourceType: "None",
				ScoringEndpoint: scorer.srv.URL + tc.path, ScoringEndpointAuthName: "scorer-token", ScoringEndpointAuthKey: "token"}
			o := r.score(context.Background(), s)
			if o.reason != tc.wantReason {
				t.Errorf("outcome %q (%s), want reason %q", o.reason, o.message, tc.wantReason)
			}
			if tc.wantReason != "" && !strings.Contains(o.message, "spec.scoring.host") {
				t.Errorf("message %q names no field", o.message)
			}
			if diff := cmp.Diff(tc.wantScorer, scorer.requests()); diff != "" {
				t.Errorf("requests to the scorer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantElsewhere, elsewhere.requests()); diff != "" {
				t.Errorf("requests elsewhere (-want +got):\n%s", diff)
			}
		})
	}
}
