package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// zoned returns a snapshot whose clusters are named <zone><n> (a cluster named "-<n>" has no
// zone label), ranked in the order given by their allocatable CPU.
func zoned(names ...string) *Snapshot {
	snap := &Snapshot{
		Sets:     []clusterv1beta2.ManagedClusterSet{{ObjectMeta: metav1.ObjectMeta{Name: "prod"}}},
		Bindings: []clusterv1beta2.ManagedClusterSetBinding{{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "prod"}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}}},
	}
	for i, n := range names {
		c := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"}}}
		if n[0] != '-' {
			c.Labels["zone"] = n[:1]
		}
		cpu := fmt.Sprint(100 - i)
		c.Status.Allocatable = clusterv1.ResourceList{"cpu": resource.MustParse(cpu)}
		c.Status.Capacity = c.Status.Allocatable
		snap.Clusters = append(snap.Clusters, c)
	}
	return snap
}

// TestSpreadChoose checks which clusters spreadPolicy chooses, greedily in rank order.
func TestSpreadChoose(t *testing.T) {
	cases := map[string]struct {
		clusters []string // in rank order
		number   *int32
		maxSkew  int32
		action   clusterv1beta1.UnsatisfiableMaxSkewAction
		want     []string
	}{
		"a refused cluster comes back when the minimum rises": {clusters: []string{"a1", "a2", "b1"}, number: ptr.To[int32](3),
			action: clusterv1beta1.DoNotSchedule, want: []string{"a1", "a2", "b1"}},
		"DoNotSchedule stops at the skew": {clusters: []string{"a1", "a2", "a3", "b1"}, number: ptr.To[int32](4),
			action: clusterv1beta1.DoNotSchedule, want: []string{"a1", "a2", "b1"}},
		"all clusters, maxSkew 2": {clusters: []string{"a1", "a2", "a3", "a4", "b1"},
			maxSkew: 2, action: clusterv1beta1.DoNotSchedule, want: []string{"a1", "a2", "a3", "b1"}},
		"no key: skipped under DoNotSchedule": {clusters: []string{"-1", "a1", "b1"}, number: ptr.To[int32](3),
			action: clusterv1beta1.DoNotSchedule, want: []string{"a1", "b1"}},
		"no key: fills under ScheduleAnyway": {clusters: []string{"-1", "a1", "b1"}, number: ptr.To[int32](3),
			action: clusterv1beta1.ScheduleAnyway, want: []string{"-1", "a1", "b1"}},
		"ScheduleAnyway fills in rank order": {clusters: []string{"a1", "a2", "a3", "a4", "b1"}, number: ptr.To[int32](4),
			action: clusterv1beta1.ScheduleAnyway, want: []string{"a1", "a2", "a3", "b1"}},
		"spread before rank": {clusters: []string{"a1", "a2", "a3", "b1", "c1"}, number: ptr.To[int32](3),
			action: clusterv1beta1.DoNotSchedule, want: []string{"a1", "b1", "c1"}},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := placement("spread", builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU))
			p.Spec.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeExact
			p.Spec.NumberOfClusters = tc.number
			p.Spec.SpreadPolicy.SpreadConstraints = []clusterv1beta1.SpreadConstraintsTerm{{TopologyKey: "zone",
				TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel, MaxSkew: tc.maxSkew, WhenUnsatisfiable: tc.action}}
			r := Schedule(p, zoned(tc.clusters...), now)
			if r.Misconfigured {
				t.Fatalf("misconfigured: %v", r.Conditions)
			}
			var got []string
			for _, d := range r.Decisions {
				got = append(got, d.ClusterName)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chosen (-want +got):\n%s", diff)
			}
		})
	}
}
