package addon

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla/flotilla/internal/hub/delivery/deliverytest"

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

// The configurations of the kinds the hub watches (AddOnDeploymentConfigs, AddOnTemplates) are
// hashed from the manager's cache, the informer whose events bring their changes; any other
// kind from the API server. Here the cache holds a newer spec than the "API server" for the
// watched kind, and the reverse for a ConfigMap, so each hash says which was read.
func TestReadHashReadsWatchedKindsFromTheCache(t *testing.T) {
	obj := func(gvk schema.GroupVersionKind, ns, name, field string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"from": field}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	adcGVK := addonv1alpha1.GroupVersion.WithKind("AddOnDeploymentConfig")
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(adcGVK, meta.RESTScopeNamespace)
	mapper.Add(cmGVK, meta.RESTScopeNamespace)
	build := func(from string) client.Client {
		// No typed scheme: the objects stay unstructured, with fields no type has.
		return fake.NewClientBuilder().WithScheme(runtime.NewScheme()).
			WithObjects(obj(adcGVK, "ns", "a", from), obj(cmGVK, "ns", "c", from)).Build()
	}
	hashOf := func(from string) string {
		h, err := SpecHash(obj(adcGVK, "ns", "a", from))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	r := &Reconciler{Reader: build("api-server"), Cache: build("cache"), Mapper: mapper}
	cases := map[string]struct {
		key  configKey
		want string
	}{
		"a watched kind, from the cache": {configKey{adc, ref("ns", "a")}, hashOf("cache")},
		"any other kind, from the API":   {configKey{cm, ref("ns", "c")}, hashOf("api-server")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, problem := r.readHash(context.Background(), tc.key)
			if problem != "" {
				t.Fatalf("readHash: %s", problem)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hash (-want +got):\n%s", diff)
			}
		})
	}
}
