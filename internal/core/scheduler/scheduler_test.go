package scheduler

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
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
	wantMsg := `Placement apps/bad: spec.prioritizerPolicy.configurations[0].scoreCoordinate.builtIn: unknown built-in prioritizer "Cheapest"; known: Balance, GPUBinPack, GPUFree, ResourceAllocatableCPU, ResourceAllocatableMemory, Spread, Steady`
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

	// OCM's placement benchmark's placement (bench/): no predicates, Exact, AddOn demo/demo,
	// ResourceAllocatableCPU and Balance.
	ocm := placement("ocm", clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
		AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "demo"}}},
		builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU), builtIn(clusterv1beta1.PrioritizerBalance))
	ocm.Spec.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeExact
	ocm.Spec.Tolerations = p.Spec.Tolerations

	for _, bc := range []struct {
		name  string
		p     *clusterv1beta1.Placement
		brief bool
	}{
		{"labels-claims", p, false}, {"cel", withCEL, false}, {"ocm-benchmark", ocm, false},
		// As the controller schedules: decisions and their reasons only.
		{"ocm-benchmark-brief", ocm, true},
	} {
		s := &Scheduler{Plugins: DefaultPlugins(), Brief: bc.brief}
		p := bc.p
		b.Run(bc.name, func(b *testing.B) {
			wantExplained := n
			if bc.brief {
				wantExplained = 0
			}
			if r := s.schedule(p, snap, now); len(r.Decisions) != 10 || len(r.Clusters) != wantExplained || r.Misconfigured {
				b.Fatalf("%d decisions and %d explanations (misconfigured %v), want 10 and %d", len(r.Decisions), len(r.Clusters), r.Misconfigured, wantExplained)
			}
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				s.schedule(p, snap, now)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "clusters/s")
			// Per second of CPU (the process's user and system time, garbage collection included),
			// which a busy machine does not change as it does the wall-clock rate.
			b.ReportMetric(float64(n)*float64(b.N)/(cpuTime(b)-cpu0).Seconds(), "clusters/cpu-s")
		})
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestBriefMatchesFull schedules random fleets (many equal scores, so ties broken by name matter)
// with random numbers of clusters, fully and briefly, and checks that the decisions, groups and
// conditions are the same: the brief top-k selection ranks as the full sort does.
func TestBriefMatchesFull(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200 {
		snap := fleet(50 + r.IntN(400))
		for j := range snap.Scores {
			snap.Scores[j].Status.Scores[0].Value = int32(r.IntN(4) * 30)
		}
		for name := range snap.OtherDecisionCounts {
			snap.OtherDecisionCounts[name] = r.IntN(3)
		}
		p := placement("p", clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
			AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "demo"}}}, builtIn(clusterv1beta1.PrioritizerBalance))
		p.Spec.NumberOfClusters = ptr.To(int32(r.IntN(40)))
		if i%3 == 0 {
			p.Spec.Tolerations = []clusterv1beta1.Toleration{{Key: "old", Operator: clusterv1beta1.TolerationOpExists}}
		}
		full := Schedule(p, snap, now)
		full.Clusters = nil
		brief := (&Scheduler{Plugins: DefaultPlugins(), Brief: true}).schedule(p, snap, now)
		if diff := cmp.Diff(full, brief, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("case %d (%d clusters, numberOfClusters %d): brief differs from full (-full +brief):\n%s",
				i, len(snap.Clusters), *p.Spec.NumberOfClusters, diff)
		}
	}
}

// TestSharedSnapshotConcurrently schedules placements at once against ForPlacement views of one
// fleet snapshot, as the controller's workers do, and checks each result against scheduling it
// alone on a fresh snapshot (run with -race: the shared caches and pooled arrays must not mix).
func TestSharedSnapshotConcurrently(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	shared := fleet(300)
	var ps []*clusterv1beta1.Placement
	for i := range 8 {
		p := placement(fmt.Sprintf("p%d", i), clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
			AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "demo"}}}, builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU))
		p.Spec.NumberOfClusters = ptr.To(int32(3 + i))
		ps = append(ps, p)
	}
	got := make([]Result, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			s := &Scheduler{Plugins: DefaultPlugins(), Brief: true}
			for range 20 {
				got[i] = s.schedule(p, shared.ForPlacement(nil, nil, map[string]int{}), now)
			}
		})
	}
	wg.Wait()
	for i, p := range ps {
		alone := fleet(300)
		alone.OtherDecisionCounts = map[string]int{}
		want := Schedule(p, alone, now)
		want.Clusters = nil
		if diff := cmp.Diff(want, got[i], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: shared and concurrent differs from alone (-alone +shared):\n%s", p.Name, diff)
		}
	}
}

// TestSatisfiedByNumberOfClusters pins PlacementSatisfied for each kind of numberOfClusters
// against 5 qualifying clusters: 0 decides none and, as OCM, reports NoManagedClusterMatched
// with OCM's message (not AllDecisionsScheduled), also when the placement had decisions.
func TestSatisfiedByNumberOfClusters(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type out struct {
		Decisions int
		Satisfied string
	}
	cases := map[string]struct {
		n    *int32
		want out
	}{
		"nil: all": {nil, out{5, "True AllDecisionsScheduled: All cluster decisions scheduled"}},
		"0: none, as OCM": {ptr.To[int32](0), out{0, "False NoManagedClusterMatched: No ManagedCluster matches any of the cluster predicate; " +
			"spec.numberOfClusters is 0, so none of the 5 qualifying clusters is chosen"}},
		"3: three":    {ptr.To[int32](3), out{3, "True AllDecisionsScheduled: All cluster decisions scheduled"}},
		"5: all five": {ptr.To[int32](5), out{5, "True AllDecisionsScheduled: All cluster decisions scheduled"}},
		"7: short by two": {ptr.To[int32](7), out{5, "False NotAllDecisionsScheduled: 2 cluster decisions unscheduled: " +
			"spec.numberOfClusters is 7, 5 clusters qualify"}},
	}
	for name, tc := range cases {
		for _, brief := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/brief=%t", name, brief), func(t *testing.T) {
				snap := fleet(5)
				for i := range snap.Clusters {
					snap.Clusters[i].Spec.Taints = nil
				}
				// Every cluster is already decided: numberOfClusters 0 empties the decisions.
				var current []string
				for _, c := range snap.Clusters {
					current = append(current, c.Name)
				}
				snap.CurrentDecisions = current
				p := placement("p")
				p.Spec.NumberOfClusters = tc.n
				res := (&Scheduler{Plugins: DefaultPlugins(), Brief: brief}).schedule(p, snap, now)
				got := out{Decisions: len(res.Decisions)}
				for _, c := range res.Conditions {
					if c.Type == clusterv1beta1.PlacementConditionSatisfied {
						got.Satisfied = string(c.Status) + " " + c.Reason + ": " + c.Message
					}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("Schedule() (-want +got):\n%s", diff)
				}
			})
		}
	}
}
