package placement

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

func mc(name string, labels map[string]string) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func exclusiveSet(name string) clusterv1beta2.ManagedClusterSet {
	return clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}}
}

func selectorSet(name string, ls *metav1.LabelSelector) clusterv1beta2.ManagedClusterSet {
	return clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: ls}}}
}

func binding(ns, set string) clusterv1beta2.ManagedClusterSetBinding {
	return clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
}

func pl(ns, name string, sets ...string) clusterv1beta1.Placement {
	return clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta1.PlacementSpec{ClusterSets: sets}}
}

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
}

func TestSetsOfClusters(t *testing.T) {
	sets := []clusterv1beta2.ManagedClusterSet{
		exclusiveSet("blue"), exclusiveSet("red"),
		selectorSet("global", &metav1.LabelSelector{}),
		selectorSet("east", &metav1.LabelSelector{MatchLabels: map[string]string{"region": "east"}}),
		selectorSet("nil-selector", nil),
	}
	cases := map[string]struct {
		clusters []*clusterv1.ManagedCluster
		want     []string
	}{
		"exclusive label and global":     {clusters: []*clusterv1.ManagedCluster{mc("a", map[string]string{clusterv1beta2.ClusterSetLabel: "blue"})}, want: []string{"blue", "global"}},
		"label selector set":             {clusters: []*clusterv1.ManagedCluster{mc("a", map[string]string{"region": "east"})}, want: []string{"east", "global"}},
		"a set not yet in the cache":     {clusters: []*clusterv1.ManagedCluster{mc("a", map[string]string{clusterv1beta2.ClusterSetLabel: "new"})}, want: []string{"global", "new"}},
		"old and new of a move":          {clusters: []*clusterv1.ManagedCluster{mc("a", map[string]string{clusterv1beta2.ClusterSetLabel: "blue"}), mc("a", map[string]string{clusterv1beta2.ClusterSetLabel: "red"})}, want: []string{"blue", "global", "red"}},
		"no labels: only the global set": {clusters: []*clusterv1.ManagedCluster{mc("a", nil)}, want: []string{"global"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SetsOfClusters(tc.clusters, sets)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlacementsForSets(t *testing.T) {
	bindings := []clusterv1beta2.ManagedClusterSetBinding{binding("ns1", "blue"), binding("ns2", "red"), binding("ns3", "blue"), binding("ns3", "red")}
	placements := []clusterv1beta1.Placement{
		pl("ns1", "all"), pl("ns1", "only-red", "red"),
		pl("ns2", "all"),
		pl("ns3", "blue", "blue"), pl("ns3", "red", "red"),
		pl("unbound", "all"),
	}
	cases := map[string]struct {
		sets []string
		want []reconcile.Request
	}{
		"blue":           {sets: []string{"blue"}, want: []reconcile.Request{req("ns1", "all"), req("ns3", "blue")}},
		"red":            {sets: []string{"red"}, want: []reconcile.Request{req("ns2", "all"), req("ns3", "red")}},
		"blue and red":   {sets: []string{"blue", "red"}, want: []reconcile.Request{req("ns1", "all"), req("ns2", "all"), req("ns3", "blue"), req("ns3", "red")}},
		"an unbound set": {sets: []string{"green"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PlacementsForSets(tc.sets, bindings, placements, nil)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlacementsInNamespace(t *testing.T) {
	got := PlacementsInNamespace("ns1", []clusterv1beta1.Placement{pl("ns1", "a"), pl("ns2", "b"), pl("ns1", "c")})
	if diff := cmp.Diff([]reconcile.Request{req("ns1", "a"), req("ns1", "c")}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestChangedFields(t *testing.T) {
	base := func() *clusterv1.ManagedCluster { return mc("a", map[string]string{"x": "1"}) }
	type want struct {
		fields   scheduler.ClusterFields
		everyone bool
	}
	cases := map[string]struct {
		change func(*clusterv1.ManagedCluster)
		want   want
	}{
		"nothing":    {change: func(*clusterv1.ManagedCluster) {}},
		"conditions": {change: func(c *clusterv1.ManagedCluster) { c.Status.Conditions = []metav1.Condition{{Type: "Available"}} }},
		"version":    {change: func(c *clusterv1.ManagedCluster) { c.Status.Version.Kubernetes = "v1.37.2" }},
		"labels":     {change: func(c *clusterv1.ManagedCluster) { c.Labels["x"] = "2" }, want: want{fields: scheduler.FieldLabels}},
		"taints":     {change: func(c *clusterv1.ManagedCluster) { c.Spec.Taints = []clusterv1.Taint{{Key: "k"}} }, want: want{everyone: true}},
		"claims": {change: func(c *clusterv1.ManagedCluster) {
			c.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "n"}}
		}, want: want{fields: scheduler.FieldClaims}},
		"allocatable": {change: func(c *clusterv1.ManagedCluster) {
			c.Status.Allocatable = clusterv1.ResourceList{"cpu": resource.MustParse("2")}
		}, want: want{fields: scheduler.FieldAllocatable}},
		"labels and allocatable": {change: func(c *clusterv1.ManagedCluster) {
			c.Labels["y"] = "1"
			c.Status.Allocatable = clusterv1.ResourceList{"cpu": resource.MustParse("2")}
		}, want: want{fields: scheduler.FieldLabels | scheduler.FieldAllocatable}},
		"deleting": {change: func(c *clusterv1.ManagedCluster) { t := metav1.NewTime(time.Unix(1, 0)); c.DeletionTimestamp = &t }, want: want{everyone: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := base()
			tc.change(n)
			var got want
			got.fields, got.everyone = ChangedFields(base(), n)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("ChangedFields (-want +got):\n%s", diff)
			}
			if changed := ClusterChanged(base(), n); changed != (tc.want != want{}) {
				t.Errorf("ClusterChanged = %t, want %t", changed, tc.want != want{})
			}
		})
	}
}

// TestForClusterUpdate: a change to one cluster reschedules every placement that can see it when
// its taints change, the placements of a set it joins or leaves, and otherwise only those that
// read the field that changed.
func TestForClusterUpdate(t *testing.T) {
	withLabels := pl("ns", "by-label")
	withLabels.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "h100"}}}}}
	withCPU := pl("ns", "by-cpu")
	withCPU.Spec.PrioritizerPolicy.Configurations = []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
		Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: clusterv1beta1.PrioritizerResourceAllocatableCPU}}}
	objs := []client.Object{
		ptrTo(exclusiveSet("blue")),
		ptrTo(selectorSet("prod", &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}})),
		ptrTo(binding("ns", "blue")), ptrTo(binding("prod-ns", "prod")),
		ptrTo(pl("ns", "balanced")), &withLabels, &withCPU, ptrTo(pl("prod-ns", "prod")),
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	r := &Reconciler{Client: c}
	base := func() *clusterv1.ManagedCluster {
		return mc("a", map[string]string{clusterv1beta2.ClusterSetLabel: "blue"})
	}
	cases := map[string]struct {
		change func(*clusterv1.ManagedCluster)
		want   []reconcile.Request
	}{
		"a label nobody reads": {change: func(c *clusterv1.ManagedCluster) { c.Labels["team"] = "x" }, want: []reconcile.Request{req("ns", "by-label")}},
		"allocatable": {change: func(c *clusterv1.ManagedCluster) {
			c.Status.Allocatable = clusterv1.ResourceList{"cpu": resource.MustParse("2")}
		}, want: []reconcile.Request{req("ns", "by-cpu")}},
		"joins a set": {change: func(c *clusterv1.ManagedCluster) { c.Labels["env"] = "prod" },
			want: []reconcile.Request{req("prod-ns", "prod"), req("ns", "by-label")}},
		"taints": {change: func(c *clusterv1.ManagedCluster) { c.Spec.Taints = []clusterv1.Taint{{Key: "k"}} },
			want: []reconcile.Request{req("ns", "balanced"), req("ns", "by-cpu"), req("ns", "by-label")}},
		"leaves its set": {change: func(c *clusterv1.ManagedCluster) { delete(c.Labels, clusterv1beta2.ClusterSetLabel) },
			want: []reconcile.Request{req("ns", "balanced"), req("ns", "by-cpu"), req("ns", "by-label")}},
	}
	sortReqs := cmpopts.SortSlices(func(a, b reconcile.Request) bool { return a.String() < b.String() })
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if diff := cmp.Diff(tc.want, r.forClusterUpdate(context.Background(), base(), n), sortReqs); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestForUsage: a cluster's ResourceUsage reschedules only the placements that can see the
// cluster and read ResourceUsages (the GPU annotation, a GPU prioritizer, a CEL GPU function).
func TestForUsage(t *testing.T) {
	withAnnotation := pl("ns", "gpu-annotation")
	withAnnotation.Annotations = map[string]string{"placement.flotilla.io/gpu": "perNode=8"}
	withFree := pl("ns", "gpu-free")
	withFree.Spec.PrioritizerPolicy.Configurations = []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
		Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: "GPUFree"}}}
	withCEL := pl("ns", "gpu-cel")
	withCEL.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{`managedCluster.freeGPUs("") > 0`}}}}}
	otherSet := pl("other-ns", "gpu-elsewhere")
	otherSet.Annotations = withAnnotation.Annotations
	objs := []client.Object{
		ptrTo(exclusiveSet("blue")), ptrTo(exclusiveSet("green")),
		ptrTo(binding("ns", "blue")), ptrTo(binding("other-ns", "green")),
		mc("a", map[string]string{clusterv1beta2.ClusterSetLabel: "blue"}),
		ptrTo(pl("ns", "balanced")), &withAnnotation, &withFree, &withCEL, &otherSet,
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	r := &Reconciler{Client: c}
	usage := func(ns, name string) *usagev1alpha1.ResourceUsage {
		return &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	cases := map[string]struct {
		usage *usagev1alpha1.ResourceUsage
		want  []reconcile.Request
	}{
		"the cluster's": {usage: usage("a", "resource-usage"),
			want: []reconcile.Request{req("ns", "gpu-annotation"), req("ns", "gpu-cel"), req("ns", "gpu-free")}},
		"another name":    {usage: usage("a", "something-else")},
		"no such cluster": {usage: usage("gone", "resource-usage")},
	}
	sortReqs := cmpopts.SortSlices(func(a, b reconcile.Request) bool { return a.String() < b.String() })
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, r.forUsage(context.Background(), tc.usage), sortReqs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
