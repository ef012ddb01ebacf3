package placement

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
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
			if diff := cmp.Diff(tc.want, PlacementsForSets(tc.sets, bindings, placements)); diff != "" {
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

func TestClusterChanged(t *testing.T) {
	base := func() *clusterv1.ManagedCluster { return mc("a", map[string]string{"x": "1"}) }
	cases := map[string]struct {
		change func(*clusterv1.ManagedCluster)
		want   bool
	}{
		"nothing":    {change: func(*clusterv1.ManagedCluster) {}},
		"conditions": {change: func(c *clusterv1.ManagedCluster) { c.Status.Conditions = []metav1.Condition{{Type: "Available"}} }},
		"version":    {change: func(c *clusterv1.ManagedCluster) { c.Status.Version.Kubernetes = "v1.37.2" }},
		"labels":     {change: func(c *clusterv1.ManagedCluster) { c.Labels["x"] = "2" }, want: true},
		"taints":     {change: func(c *clusterv1.ManagedCluster) { c.Spec.Taints = []clusterv1.Taint{{Key: "k"}} }, want: true},
		"claims": {change: func(c *clusterv1.ManagedCluster) {
			c.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "n"}}
		}, want: true},
		"allocatable": {change: func(c *clusterv1.ManagedCluster) {
			c.Status.Allocatable = clusterv1.ResourceList{"cpu": resource.MustParse("2")}
		}, want: true},
		"deleting": {change: func(c *clusterv1.ManagedCluster) { t := metav1.NewTime(time.Unix(1, 0)); c.DeletionTimestamp = &t }, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := ClusterChanged(base(), n); got != tc.want {
				t.Errorf("ClusterChanged = %t, want %t", got, tc.want)
			}
		})
	}
}
