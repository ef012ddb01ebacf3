package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// fleet returns a snapshot of n clusters in set "prod" bound to namespace apps, each with
// allocatable cpu and memory, an AddOnPlacementScore "demo" with score "demo", and every tenth
// tainted PreferNoSelect; every third was decided by another placement.
func fleet(n int) *Snapshot {
	snap := &Snapshot{
		Sets:                []clusterv1beta2.ManagedClusterSet{{ObjectMeta: metav1.ObjectMeta{Name: "prod"}}},
		Bindings:            []clusterv1beta2.ManagedClusterSetBinding{{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "prod"}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}}},
		OtherDecisionCounts: map[string]int{},
	}
	for i := range n {
		name := fmt.Sprintf("cluster-%05d", i)
		c := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			clusterv1beta2.ClusterSetLabel: "prod", "region": []string{"east", "west"}[i%2]}}}
		c.Status.Allocatable = clusterv1.ResourceList{
			"cpu":    *resource.NewMilliQuantity(int64(1000+i%64*250), resource.DecimalSI),
			"memory": *resource.NewQuantity(int64(1+i%32)<<30, resource.BinarySI),
		}
		c.Status.Capacity = c.Status.Allocatable
		c.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "platform.open-cluster-management.io", Value: "AWS"}}
		if i%10 == 0 {
			c.Spec.Taints = []clusterv1.Taint{{Key: "old", Effect: clusterv1.TaintEffectPreferNoSelect}}
		}
		snap.Clusters = append(snap.Clusters, c)
		snap.Scores = append(snap.Scores, clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "demo"},
			Status: clusterv1alpha1.AddOnPlacementScoreStatus{Scores: []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "demo", Value: int32(i % 100)}}}})
		if i%3 == 0 {
			snap.OtherDecisionCounts[name] = i % 7
		}
	}
	return snap
}

func placement(name string, configs ...clusterv1beta1.PrioritizerConfig) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Generation: 1},
		Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](10),
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeAdditive, Configurations: configs}}}
}

func builtIn(name string) clusterv1beta1.PrioritizerConfig {
	return clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name}}
}

// TestBatchOneBad schedules two placements against one snapshot: the misconfigured one reports
// the field, the good one is scheduled as if it were alone, and the snapshot is not changed.
func TestBatchOneBad(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := fleet(20)
	before := fleet(20)
	good := placement("good", builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU))
	bad := placement("bad", builtIn("Cheapest"))

	alone := Schedule(good, snap, now)
	var got []Result
	for _, p := range []*clusterv1beta1.Placement{bad, good} {
		got = append(got, Schedule(p, snap, now))
	}
	if !got[0].Misconfigured || len(got[0].Decisions) != 0 {
		t.Errorf("bad placement: misconfigured %v with %d decisions, want misconfigured and none", got[0].Misconfigured, len(got[0].Decisions))
	}
	wantMsg := `Placement apps/bad: spec.prioritizerPolicy.configurations[0].scoreCoordinate.builtIn: unknown built-in prioritizer "Cheapest"; known: Balance, ResourceAllocatableCPU, ResourceAllocatableMemory, Spread, Steady`
	if diff := cmp.Diff([]string{clusterv1beta1.PlacementConditionMisconfigured + "=True " + wantMsg}, conditionLines(got[0])); diff != "" {
		t.Errorf("bad placement conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(alone, got[1]); diff != "" {
		t.Errorf("good placement scheduled after a bad one differs from alone (-want +got):\n%s", diff)
	}
	if len(got[1].Decisions) != 10 || got[1].Misconfigured {
		t.Errorf("good placement: %d decisions, misconfigured %v; want 10 and false", len(got[1].Decisions), got[1].Misconfigured)
	}
	if diff := cmp.Diff(before, snap, cmpopts.IgnoreUnexported(Snapshot{})); diff != "" {
		t.Errorf("Schedule changed the snapshot (-before +after):\n%s", diff)
	}
}

func conditionLines(r Result) []string {
	var out []string
	for _, c := range r.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+" "+c.Message)
	}
	return out
}

// TestSchedulerClock checks that the Scheduler reads time from its clock: the same toleration is
// in force before its expiry (with a requeue at it) and not after.
func TestSchedulerClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	added := metav1.NewTime(start)
	snap := fleet(1)
	snap.Clusters[0].Spec.Taints = []clusterv1.Taint{{Key: clusterv1beta1.TaintClusterUnreachable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: &added}}
	p := placement("tol")
	p.Spec.Tolerations = []clusterv1beta1.Toleration{{Key: clusterv1beta1.TaintClusterUnreachable, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](300)}}

	clk := clocktesting.NewFakePassiveClock(start.Add(time.Minute))
	s := New(clk)
	r := s.Schedule(p, snap)
	if len(r.Decisions) != 1 || r.RequeueAfter != 4*time.Minute {
		t.Errorf("at +1m: %d decisions, requeue %v; want 1 and 4m0s", len(r.Decisions), r.RequeueAfter)
	}
	clk.SetTime(start.Add(5 * time.Minute))
	r = s.Schedule(p, snap)
	if len(r.Decisions) != 0 || r.RequeueAfter != 0 || r.Clusters[0].FilteredBy != "TaintToleration" {
		t.Errorf("at +5m: %d decisions, requeue %v, filtered by %q; want 0, 0s, TaintToleration", len(r.Decisions), r.RequeueAfter, r.Clusters[0].FilteredBy)
	}
}

// BenchmarkSchedule schedules one placement over 10,000 clusters with every plugin: set
// membership, predicates (labels and claims; and CEL in the second case), taints, and all five
// prioritizers. It reports cluster evaluations per second.
func BenchmarkSchedule(b *testing.B) {
	const n = 10000
	snap := fleet(n)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := placement("bench",
		builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU),
		builtIn(clusterv1beta1.PrioritizerResourceAllocatableMemory),
		clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
			AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "demo"}}})
	p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"east", "west"}}}},
		ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "platform.open-cluster-management.io", Operator: metav1.LabelSelectorOpExists}}},
	}}}
	p.Spec.Tolerations = []clusterv1beta1.Toleration{{Key: "spot", Operator: clusterv1beta1.TolerationOpExists}}
	withCEL := p.DeepCopy()
	withCEL.Spec.Predicates[0].RequiredClusterSelector.CelSelector.CelExpressions = []string{
		`managedCluster.scores("demo").exists(s, s.name == "demo" && s.value >= 0)`}

	for name, p := range map[string]*clusterv1beta1.Placement{"labels-claims": p, "cel": withCEL} {
		b.Run(name, func(b *testing.B) {
			if r := Schedule(p, snap, now); len(r.Decisions) != 10 || len(r.Clusters) != n || r.Misconfigured {
				b.Fatalf("%d decisions and %d explanations (misconfigured %v), want 10 and %d", len(r.Decisions), len(r.Clusters), r.Misconfigured, n)
			}
			b.ReportAllocs()
			for b.Loop() {
				Schedule(p, snap, now)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "clusters/s")
		})
	}
}
