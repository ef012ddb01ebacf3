//go:build integration

package work

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true})) }

// joined is a spoke registered with the hub by a running registration agent.
type joined struct {
	Name  string
	Spoke *testenv.Cluster
	Reg   *agentreg.Agent
	Dyn   dynamic.Interface
	// stopWork stops the running work agent.
	stopWork func()
	// writes records the requests of the running work agent to the spoke that are not reads.
	writes *requestLog
}

// joinAll starts the hub, joins every spoke (testenv.JoinSpokes) and starts a work agent on each.
// Everything runs until the test ends.
func joinAll(t *testing.T, env *testenv.Env) []*joined {
	t.Helper()
	env.StartHub(t, testenv.TestHubOptions())
	var out []*joined
	for _, s := range env.JoinSpokes(t) {
		dyn, err := dynamic.NewForConfig(s.Spoke.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		j := &joined{Name: s.Name, Spoke: s.Spoke, Reg: s.Agent, Dyn: dyn}
		j.startWork(t, 2*time.Second)
		out = append(out, j)
	}
	return out
}

// startWork runs a work agent for the cluster, looking at every work again each resync, until
// stopWork or the end of the test.
func (j *joined) startWork(t *testing.T, resync time.Duration) {
	t.Helper()
	j.writes = &requestLog{}
	spoke := j.Spoke.RESTConfig()
	spoke.Wrap(j.writes.wrap)
	w, err := work.New(work.Options{
		ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Reg.Hub(), Spoke: spoke,
		Resync: resync, Log: testr.New(t).WithName(j.Name + "-work"),
	})
	if err != nil {
		t.Fatal(err)
	}
	j.stopWork = testenv.RunUntilCleanup(t, w.Run)
}

// requestLog records the writes the API server carried out (method and path).
type requestLog struct {
	mu       sync.Mutex
	requests []string
	// fresh records the reads that the API server answers from etcd (no resourceVersion=0).
	fresh []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		what := r.Method + " " + r.URL.Path
		if r.Method == http.MethodPost && r.GetBody != nil {
			// A create names its object in the body.
			if body, err := r.GetBody(); err == nil {
				var obj struct {
					Metadata struct{ Name string } `json:"metadata"`
				}
				_ = json.NewDecoder(body).Decode(&obj)
				what += "/" + obj.Metadata.Name
			}
		}
		if r.Method == http.MethodGet && r.URL.Query().Get("watch") != "true" && r.URL.Query().Get("resourceVersion") != "0" {
			l.mu.Lock()
			l.fresh = append(l.fresh, what)
			l.mu.Unlock()
		}
		resp, err := rt.RoundTrip(r)
		// A write the API server refused changed nothing (a manifest that keeps failing is tried
		// again at every resync).
		if r.Method != http.MethodGet && err == nil && resp.StatusCode < 300 {
			l.mu.Lock()
			l.requests = append(l.requests, what)
			l.mu.Unlock()
		}
		return resp, err
	})
}

// Requests returns the requests recorded so far.
func (l *requestLog) Requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.requests...)
}

// FreshReads returns the reads recorded so far that were not served from the API server's cache.
func (l *requestLog) FreshReads() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.fresh...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// manifests turns objects (maps or typed objects) into manifests.
func manifests(t *testing.T, objs ...any) []workv1.Manifest {
	t.Helper()
	var out []workv1.Manifest
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: b}})
	}
	return out
}

// newWork is a ManifestWork for cluster with the given manifests.
func newWork(cluster, name string, ms []workv1.Manifest) *workv1.ManifestWork {
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: ms}},
	}
}

// manifestState summarizes a work's per-manifest Applied conditions, "ordinal:kind/name=Status/Reason".
func manifestState(w *workv1.ManifestWork) string {
	var parts []string
	for _, m := range w.Status.ResourceStatus.Manifests {
		c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied)
		st := "none"
		if c != nil {
			st = string(c.Status) + "/" + c.Reason
		}
		parts = append(parts, fmt.Sprintf("%d:%s/%s=%s", m.ResourceMeta.Ordinal, m.ResourceMeta.Kind, m.ResourceMeta.Name, st))
	}
	return strings.Join(parts, " ")
}

// waitWork waits until cond holds for the work on the hub and returns it.
func waitWork(t *testing.T, hub client.Client, ns, name, what string, cond func(*workv1.ManifestWork) bool) *workv1.ManifestWork {
	t.Helper()
	w := &workv1.ManifestWork{}
	testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("work %s/%s: %s", ns, name, what), func(ctx context.Context) (bool, string, error) {
		if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, w); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		return cond(w), fmt.Sprintf("generation %d, conditions %s, manifests %s", w.Generation, workConditions(w), manifestState(w)), nil
	})
	return w
}

func workConditions(w *workv1.ManifestWork) string {
	var parts []string
	for _, c := range w.Status.Conditions {
		parts = append(parts, c.Type+"="+string(c.Status))
	}
	return strings.Join(parts, ",")
}

// allApplied holds when the work's status is of its current generation and every manifest is applied.
func allApplied(w *workv1.ManifestWork) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation &&
		len(w.Status.ResourceStatus.Manifests) == len(w.Spec.Workload.Manifests)
}

// manifestCondition returns manifest i's condition of type t, or nil.
func manifestCondition(w *workv1.ManifestWork, i int, t string) *metav1.Condition {
	for _, m := range w.Status.ResourceStatus.Manifests {
		if int(m.ResourceMeta.Ordinal) == i {
			return meta.FindStatusCondition(m.Conditions, t)
		}
	}
	return nil
}
