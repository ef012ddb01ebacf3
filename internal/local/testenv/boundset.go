package testenv

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// BoundSet is a test's own ManagedClusterSet (ExclusiveClusterSetLabel), bound into a namespace of
// the test's: where placement tests put their clusters and placements.
type BoundSet struct {
	Client    client.Client
	Namespace string
	Set       string
}

// NewBoundSet makes set and binds it into a new namespace on the hub; both go when the test ends.
func (e *Env) NewBoundSet(t testing.TB, c client.Client, set string) *BoundSet {
	t.Helper()
	b := &BoundSet{Client: c, Namespace: e.Namespace(t, e.Hub), Set: set}
	Create(t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	Create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: b.Namespace},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
	return b
}

// Cluster makes a ManagedCluster in the set with the labels given; it goes when the test ends.
func (b *BoundSet) Cluster(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	b.cluster(t, name, labels, false)
}

// AcceptedCluster is Cluster with spec.hubAcceptsClient: the hub puts ManifestWorks and add-ons
// only in the namespaces of clusters it accepts (internal/hub/delivery).
func (b *BoundSet) AcceptedCluster(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	b.cluster(t, name, labels, true)
}

func (b *BoundSet) cluster(t testing.TB, name string, labels map[string]string, accepted bool) {
	t.Helper()
	l := map[string]string{clusterv1beta2.ClusterSetLabel: b.Set}
	for k, v := range labels {
		l[k] = v
	}
	Create(t, b.Client, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted}})
}

// Update reads obj, applies change and writes it back, again on conflicts.
func Update(t testing.TB, c client.Client, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
	}
}
