package testenv

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
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

// AgentlessCluster is AcceptedCluster with its namespace made first: no agent runs for it, and a
// namespace the hub did not make leaves the registration controller nothing to set up or clean.
func (b *BoundSet) AgentlessCluster(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	Create(t, b.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	b.AcceptedCluster(t, name, labels)
}

// NoAgentTolerations tolerates the taints the hub puts on clusters without a running agent: a
// placement of a test's agentless clusters needs them.
func NoAgentTolerations() []clusterv1beta1.Toleration {
	return []clusterv1beta1.Toleration{
		{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists},
		{Key: clusterv1.ManagedClusterTaintUnavailable, Operator: clusterv1beta1.TolerationOpExists},
	}
}

// AgentlessPlacement makes a Placement in the set's namespace of every cluster with the labels
// match, with NoAgentTolerations.
func (b *BoundSet) AgentlessPlacement(t testing.TB, name string, match map[string]string) {
	t.Helper()
	Create(t, b.Client, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: name}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations: NoAgentTolerations(),
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: match}}}},
	}})
}

// StartHubWithSet starts a hub cluster with the CRDs, runs the hub in the test (TestHubOptions,
// as its generated roles) and makes set, bound into a new namespace: where the tests of
// controllers that act on placed, agentless clusters start.
func StartHubWithSet(t *testing.T, set string) *BoundSet {
	t.Helper()
	env := Start(t, Options{CRDs: true})
	c := env.HubClient(t)
	env.StartHub(t, TestHubOptions())
	return env.NewBoundSet(t, c, set)
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
