package addon

import (
	"context"
	"github.com/flotilla/flotilla/internal/hub/delivery/deliverytest"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
)

// deliveryFixture is placement default/p selecting c-ok and four clusters the hub puts nothing in.
func deliveryFixture() []client.Object { return deliverytest.Fixture("default", t0) }

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
