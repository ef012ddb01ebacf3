package workreplicaset

import (
	"context"
	"github.com/flotilla/flotilla/internal/hub/delivery/deliverytest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// deliveryFixture is placement apps/p selecting c-ok and four clusters the hub puts nothing in.
func deliveryFixture() []client.Object { return deliverytest.Fixture("apps", t0) }

// A set creates ManifestWorks only in clusters the hub accepts, not being deleted, in a namespace
// not terminating, and its status names the others with why.
func TestReconcileSkipsClustersNotAccepted(t *testing.T) {
	set := testSet()
	set.Finalizers = []string{Finalizer}
	set.Spec.PlacementRefs = []workv1alpha1.LocalPlacementReference{{Name: "p"}}
	set.Spec.PlacementRefs[0].RolloutStrategy.Type = "All"
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(append(deliveryFixture(), set)...).
		WithStatusSubresource(set).Build()
	r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(t0)}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(set)}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Works    []string
		Verified string
		Named    map[string]string // each held-back cluster: the reason its message shows
	}
	got := result{Named: map[string]string{}}
	works := &workv1.ManifestWorkList{}
	if err := c.List(context.Background(), works); err != nil {
		t.Fatal(err)
	}
	for _, w := range works.Items {
		got.Works = append(got.Works, w.Namespace+"/"+w.Name)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(set), set); err != nil {
		t.Fatal(err)
	}
	v := meta.FindStatusCondition(set.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified)
	if v == nil {
		t.Fatal("no PlacementVerified condition")
	}
	got.Verified = string(v.Status) + "/" + v.Reason
	phrases := map[string]string{
		"c-denied":         "ManagedCluster c-denied is not accepted by the hub (spec.hubAcceptsClient is false)",
		"c-deleting":       "ManagedCluster c-deleting is being deleted",
		"c-ns-terminating": "namespace c-ns-terminating of ManagedCluster c-ns-terminating is terminating",
		"c-unknown":        "ManagedCluster c-unknown does not exist",
	}
	reasons := map[string]string{"c-denied": delivery.ReasonNotAccepted, "c-deleting": delivery.ReasonDeleting,
		"c-ns-terminating": delivery.ReasonNamespaceTerminating, "c-unknown": delivery.ReasonNotFound}
	for cl, p := range phrases {
		if strings.Contains(v.Message, p) {
			got.Named[cl] = reasons[cl]
		}
	}
	want := result{Works: []string{"c-ok/web.v1"}, Verified: "True/" + workv1alpha1.ReasonAsExpected, Named: reasons}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s\nPlacementVerified message: %s", diff, v.Message)
	}
	if !strings.HasPrefix(v.Message, "5 clusters selected; 4 of them get no ManifestWork: ") {
		t.Errorf("PlacementVerified message %q: want it to count the 5 selected and the 4 held back", v.Message)
	}
}
