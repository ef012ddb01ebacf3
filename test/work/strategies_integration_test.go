//go:build integration

package work

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func strategy(resource, ns, name string, s workv1.UpdateStrategyType) workv1.ManifestConfigOption {
	return workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: resource, Namespace: ns, Name: name},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: s},
	}
}

func cmData(t *testing.T, j *joined, ns, name string) map[string]string {
	t.Helper()
	cm, err := j.Spoke.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap %s/%s on %s: %v", ns, name, j.Name, err)
	}
	return cm.Data
}

// testCreateOnlyReadOnly: CreateOnly creates what is missing and leaves what exists; ReadOnly only
// reads (its feedback comes back); neither takes an object it did not create, so deleting the
// work leaves those.
func testCreateOnlyReadOnly(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	spokeNamespace(t, one.Spoke.Client, "modes")
	for _, name := range []string{"existing", "watched"} {
		if _, err := one.Spoke.Client.CoreV1().ConfigMaps("modes").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "modes"}, Data: map[string]string{"v": "spoke"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := newWork(one.Name, "modes", manifests(t,
		configMap("modes", "existing", map[string]string{"v": "work"}),
		configMap("modes", "fresh", map[string]string{"v": "work"}),
		configMap("modes", "watched", map[string]string{"v": "work"})))
	readOnly := strategy("configmaps", "modes", "watched", workv1.UpdateStrategyTypeReadOnly)
	readOnly.FeedbackRules = []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "v", Path: ".data.v"}}}}
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{
		strategy("configmaps", "modes", "existing", workv1.UpdateStrategyTypeCreateOnly),
		strategy("configmaps", "modes", "fresh", workv1.UpdateStrategyTypeCreateOnly),
		readOnly,
	}
	createWork(t, hub, w)
	waitWork(t, hub, one.Name, "modes", "applied, with the read-only object's value", func(w *workv1.ManifestWork) bool {
		return allApplied(w) && feedback(w, 2, "v") == "spoke"
	})
	for name, want := range map[string]string{"existing": "spoke", "fresh": "work", "watched": "spoke"} {
		if got := cmData(t, one, "modes", name)["v"]; got != want {
			t.Errorf("ConfigMap %s: v = %q, want %q", name, got, want)
		}
	}
	deleteWork(t, hub, one.Name, "modes")
	waitGone(t, one, cmGVR, "modes", "fresh")
	for _, name := range []string{"existing", "watched"} {
		if got := cmData(t, one, "modes", name)["v"]; got != "spoke" {
			t.Errorf("ConfigMap %s the work did not create: v = %q after the work went, want it kept as it was", name, got)
		}
	}
}

// testIgnoreFields: server-side apply leaves a field listed in ignoreFields to the spoke once it
// is there, while applying the rest of the work's changes.
func testIgnoreFields(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	spokeNamespace(t, one.Spoke.Client, "ignore")
	w := newWork(one.Name, "ignore", manifests(t, configMap("ignore", "c", map[string]string{"k": "work", "a": "1"})))
	ssa := strategy("configmaps", "ignore", "c", workv1.UpdateStrategyTypeServerSideApply)
	ssa.UpdateStrategy.ServerSideApply = &workv1.ServerSideApplyConfig{IgnoreFields: []workv1.IgnoreField{
		{Condition: workv1.IgnoreFieldsConditionOnSpokePresent, JSONPaths: []string{".data.k"}},
	}}
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{ssa}
	createWork(t, hub, w)
	waitWork(t, hub, one.Name, "ignore", "applied", allApplied)
	cm, err := one.Spoke.Client.CoreV1().ConfigMaps("ignore").Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "spoke"
	if _, err := one.Spoke.Client.CoreV1().ConfigMaps("ignore").Update(ctx, cm, metav1.UpdateOptions{FieldManager: "operator"}); err != nil {
		t.Fatal(err)
	}
	update(t, hub, w, func() {
		w.Spec.Workload.Manifests = manifests(t, configMap("ignore", "c", map[string]string{"k": "work", "a": "2"}))
	})
	waitWork(t, hub, one.Name, "ignore", "applied at the new generation", allApplied)
	got := cmData(t, one, "ignore", "c")
	if got["k"] != "spoke" || got["a"] != "2" {
		t.Errorf("ConfigMap data = %v, want k kept as the spoke set it and a=2 from the work", got)
	}
}

// testWatchFeedback: with feedbackScrapeType Watch, a change of the object on the spoke comes
// back at once, although the agent looks at its works only once an hour.
func testWatchFeedback(t *testing.T, env *testEnv) {
	two, hub, ctx := env.clusters[1], env.hub, context.Background()
	two.stopWork()
	two.startWork(env.outer, time.Hour)
	spokeNamespace(t, two.Spoke.Client, "watch")
	w := newWork(two.Name, "watch", manifests(t, configMap("watch", "c", map[string]string{"a": "1"})))
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "watch", Name: "c"},
		FeedbackScrapeType: workv1.FeedbackWatchType,
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "k", Path: ".data.k"}}}},
	}}
	createWork(t, hub, w)
	waitWork(t, hub, two.Name, "watch", "applied", allApplied)
	cm, err := two.Spoke.Client.CoreV1().ConfigMaps("watch").Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "seen"
	if _, err := two.Spoke.Client.CoreV1().ConfigMaps("watch").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitWork(t, hub, two.Name, "watch", "the spoke's change in the feedback", func(w *workv1.ManifestWork) bool {
		return feedback(w, 0, "k") == "seen"
	})
}

// update reads w from the hub, changes it and writes it back.
func update(t *testing.T, hub client.Client, w *workv1.ManifestWork, change func()) {
	t.Helper()
	if err := hub.Get(context.Background(), client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	change()
	if err := hub.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

// testForegroundWaits: a deleted work stays on the hub, saying Deleting, until what it applied is
// gone from the spoke (here held by a finalizer of someone else's).
func testForegroundWaits(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	spokeNamespace(t, one.Spoke.Client, "hold")
	createWork(t, hub, newWork(one.Name, "hold", manifests(t, configMap("hold", "held", nil))))
	waitWork(t, hub, one.Name, "hold", "applied", allApplied)
	cms := one.Spoke.Client.CoreV1().ConfigMaps("hold")
	cm, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = []string{"example.com/hold"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := hub.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: "hold"}}); err != nil {
		t.Fatal(err)
	}
	waitWork(t, hub, one.Name, "hold", "Deleting while the ConfigMap is held", func(w *workv1.ManifestWork) bool {
		c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkDeleting)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == work.ReasonDeleting
	})
	cm, err = cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil || cm.DeletionTimestamp == nil {
		t.Fatalf("held ConfigMap: %v (err %v), want it being deleted", cm, err)
	}
	cm.Finalizers = nil
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the work to go once the ConfigMap is gone", func(ctx context.Context) (bool, string, error) {
		err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "hold"}, &workv1.ManifestWork{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

// testAdopt: an object made by hand as the work says is taken over by ownership alone, with none
// of its fields written (a Job's template cannot change).
func testAdopt(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	spokeNamespace(t, one.Spoke.Client, "adopt")
	b, err := json.Marshal(job("adopt", "by-hand"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	jobs := one.Dyn.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}).Namespace("adopt")
	if _, err := jobs.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createWork(t, hub, newWork(one.Name, "adopt", manifests(t, job("adopt", "by-hand"))))
	waitWork(t, hub, one.Name, "adopt", "applied", allApplied)
	got, err := jobs.Get(ctx, "by-hand", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{appliedName(env.env, "adopt")}, ownersOf(got)); diff != "" {
		t.Errorf("adopted Job's owners (-want +got):\n%s", diff)
	}
}
