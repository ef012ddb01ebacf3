package addon

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
)

// deliveryFixture is a placement in namespace default that selects c-ok, c-denied, c-deleting,
// c-ns-terminating and c-unknown (no ManagedCluster), each named for what is wrong with it.
func deliveryFixture() []client.Object {
	hold := []string{"test/hold"}
	gone := &metav1.Time{Time: t0}
	objs := []client.Object{
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}},
		&clusterv1beta1.PlacementDecision{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p-decision-1", Labels: map[string]string{
				clusterv1beta1.PlacementLabel: "p", clusterv1beta1.DecisionGroupIndexLabel: "0"}},
			Status: clusterv1beta1.PlacementDecisionStatus{Decisions: []clusterv1beta1.ClusterDecision{
				{ClusterName: "c-ok"}, {ClusterName: "c-denied"}, {ClusterName: "c-deleting"}, {ClusterName: "c-ns-terminating"}, {ClusterName: "c-unknown"},
			}},
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

// Only clusters the hub accepts, not being deleted, in a namespace not terminating get the
// add-on: the others' namespaces are being emptied by the registration controller.
func TestInstallSkipsClustersNotAccepted(t *testing.T) {
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "cma-uid"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{
			Type:       addonv1alpha1.InstallStrategyPlacements,
			Placements: []addonv1alpha1.PlacementStrategy{{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "default", Name: "p"}}},
		}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(append(deliveryFixture(), cma)...).
		WithStatusSubresource(cma, &addonv1alpha1.ManagedClusterAddOn{}).
		WithIndex(&addonv1alpha1.ManagedClusterAddOn{}, nameIndex, func(o client.Object) []string { return []string{o.GetName()} }).
		Build()
	r := &Reconciler{Client: c, Reader: c, Clock: clocktesting.NewFakePassiveClock(t0)}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "gpu"}}); err != nil {
		t.Fatal(err)
	}
	l := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.List(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range l.Items {
		got = append(got, m.Namespace+"/"+m.Name)
	}
	if diff := cmp.Diff([]string{"c-ok/gpu"}, got); diff != "" {
		t.Errorf("ManagedClusterAddOns (-want +got):\n%s", diff)
	}
}
