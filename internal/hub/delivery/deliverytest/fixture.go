package deliverytest

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// Clusters are the clusters Fixture's placement selects, each named for what is wrong with it:
// only c-ok is one the hub delivers to (c-unknown has no ManagedCluster).
var Clusters = []string{"c-ok", "c-denied", "c-deleting", "c-ns-terminating", "c-unknown"}

// Fixture is placement namespace/p selecting Clusters, with their ManagedClusters and
// namespaces; deleted objects carry a deletion time at and a finalizer that holds them.
func Fixture(namespace string, at time.Time) []client.Object {
	hold := []string{"test/hold"}
	gone := &metav1.Time{Time: at}
	decisions := make([]clusterv1beta1.ClusterDecision, 0, len(Clusters))
	for _, c := range Clusters {
		decisions = append(decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	objs := []client.Object{
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "p"}},
		&clusterv1beta1.PlacementDecision{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "p-decision-1", Labels: map[string]string{
				clusterv1beta1.PlacementLabel: "p", clusterv1beta1.DecisionGroupIndexLabel: "0"}},
			Status: clusterv1beta1.PlacementDecisionStatus{Decisions: decisions},
		},
	}
	for _, c := range []struct {
		name                 string
		accepted, deleting   bool
		namespaceTerminating bool
	}{
		{"c-ok", true, false, false}, {"c-denied", false, false, false}, {"c-deleting", true, true, false}, {"c-ns-terminating", true, false, true},
	} {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: c.accepted}}
		if c.deleting {
			mc.DeletionTimestamp, mc.Finalizers = gone, hold
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.name}}
		if c.namespaceTerminating {
			ns.DeletionTimestamp, ns.Finalizers, ns.Status.Phase = gone, hold, corev1.NamespaceTerminating
		}
		objs = append(objs, mc, ns)
	}
	return objs
}
