package placement

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

func TestDesiredStatus(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	cond := func(typ string, status metav1.ConditionStatus, reason string, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, ObservedGeneration: 2, LastTransitionTime: at}
	}
	satisfiedAt := func(at metav1.Time) metav1.Condition {
		return cond(clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionTrue, clusterv1beta1.PlacementReasonAllDecisionsScheduled, at)
	}
	configuredAt := func(at metav1.Time) metav1.Condition {
		return cond(clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionFalse, clusterv1beta1.PlacementReasonSucceedConfigured, at)
	}
	misconfigured := cond(clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionTrue, clusterv1beta1.PlacementReasonMisconfigured, t1)
	before := clusterv1beta1.PlacementStatus{
		NumberOfSelectedClusters: 3,
		DecisionGroups:           []clusterv1beta1.DecisionGroupStatus{{DecisionGroupIndex: 0, Decisions: []string{"p-decision-1"}, ClusterCount: 3}},
		Conditions:               []metav1.Condition{satisfiedAt(t0), configuredAt(t0)},
	}
	groups := []scheduler.DecisionGroup{{Index: 0, Name: "canary", Clusters: []string{"a"}}, {Index: 1, Clusters: []string{"b", "c"}}}
	scheduled := scheduler.Result{
		Decisions:          []scheduler.Decision{{ClusterName: "a"}, {ClusterName: "b"}, {ClusterName: "c"}},
		Groups:             groups,
		PlacementDecisions: scheduler.SlicePlacementDecisions("p", groups, map[string]scheduler.Decision{}),
		Conditions:         []metav1.Condition{satisfiedAt(t1), configuredAt(t1)},
	}
	scoresWritten := scheduled
	scoresWritten.LastScoreUpdateTime = &t1
	cases := map[string]struct {
		res         scheduler.Result
		want        clusterv1beta1.PlacementStatus
		wantChanged bool
	}{
		"groups name their PlacementDecisions; unchanged conditions keep their time": {
			res: scoresWritten,
			want: clusterv1beta1.PlacementStatus{
				NumberOfSelectedClusters: 3,
				DecisionGroups: []clusterv1beta1.DecisionGroupStatus{
					{DecisionGroupIndex: 0, DecisionGroupName: "canary", Decisions: []string{"p-decision-1"}, ClusterCount: 1},
					{DecisionGroupIndex: 1, Decisions: []string{"p-decision-2"}, ClusterCount: 2},
				},
				Conditions:          []metav1.Condition{satisfiedAt(t0), configuredAt(t0)},
				LastScoreUpdateTime: &t1,
			},
			wantChanged: true,
		},
		"misconfigured: only PlacementMisconfigured changes": {
			res: scheduler.Result{Misconfigured: true, Conditions: []metav1.Condition{misconfigured}},
			want: clusterv1beta1.PlacementStatus{
				NumberOfSelectedClusters: 3, DecisionGroups: before.DecisionGroups,
				Conditions: []metav1.Condition{satisfiedAt(t0), misconfigured},
			},
			wantChanged: true,
		},
		"nothing new: no write": {
			res: scheduler.Result{
				Decisions: scheduled.Decisions, Groups: []scheduler.DecisionGroup{{Index: 0, Clusters: []string{"a", "b", "c"}}},
				PlacementDecisions: scheduler.SlicePlacementDecisions("p", []scheduler.DecisionGroup{{Index: 0, Clusters: []string{"a", "b", "c"}}}, nil),
				Conditions:         scheduled.Conditions,
			},
			want: before,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 2}, Status: *before.DeepCopy()}
			got := DesiredStatus(p, tc.res)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if changed := statusChanged(p.Status, got); changed != tc.wantChanged {
				t.Errorf("statusChanged = %t, want %t", changed, tc.wantChanged)
			}
		})
	}
}

func TestMembershipChange(t *testing.T) {
	cases := map[string]struct {
		before, after []string
		want          string
	}{
		"same":                 {before: []string{"a", "b"}, after: []string{"b", "a"}},
		"added":                {before: []string{"a"}, after: []string{"a", "b"}, want: "1 added (b), 0 removed"},
		"many both ways":       {before: []string{"a", "b"}, after: []string{"c", "d", "e", "f"}, want: "4 added (c, d, e, ...), 2 removed (a, b)"},
		"from nothing":         {after: []string{"a"}, want: "1 added (a), 0 removed"},
		"moved between slices": {before: []string{"a", "b"}, after: []string{"a", "b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := membershipChange(slicesOf(tc.before...), slicesOf(tc.after...))
			if got != tc.want {
				t.Errorf("membershipChange = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNumberOfClustersZero schedules, with the scheduler the controller runs, a placement whose
// three decided clusters all still qualify and whose numberOfClusters is now 0, and checks what
// the controller writes, as OCM: the PlacementDecision emptied (not deleted: there is always one),
// status.numberOfSelectedClusters 0 and PlacementSatisfied False NoManagedClusterMatched.
func TestNumberOfClustersZero(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	snap := &scheduler.Snapshot{
		Sets: []clusterv1beta2.ManagedClusterSet{exclusiveSet("prod")},
		Bindings: []clusterv1beta2.ManagedClusterSetBinding{{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "prod"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}}},
		CurrentDecisions: []string{"a", "b", "c"},
	}
	for _, name := range snap.CurrentDecisions {
		snap.Clusters = append(snap.Clusters, clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"}}})
	}
	current := slicesOf("a", "b", "c")
	p := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "p", Generation: 2},
		Spec:       clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](0)},
		Status: clusterv1beta1.PlacementStatus{
			NumberOfSelectedClusters: 3,
			DecisionGroups:           []clusterv1beta1.DecisionGroupStatus{{DecisionGroupIndex: 0, Decisions: []string{"p-decision-1"}, ClusterCount: 3}},
			Conditions: []metav1.Condition{
				{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue, Reason: clusterv1beta1.PlacementReasonAllDecisionsScheduled,
					Message: "All cluster decisions scheduled", ObservedGeneration: 1, LastTransitionTime: t0},
			},
		},
	}
	sched := scheduler.New(clocktesting.NewFakePassiveClock(t1.Time))
	sched.Brief = true
	res := sched.Schedule(p, snap)

	wantSteps := []Step{{Slice: scheduler.PlacementDecisionSlice{Name: "p-decision-1", Labels: current[0].Labels}}}
	if diff := cmp.Diff(wantSteps, Plan(current, res.PlacementDecisions), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Plan (-want +got):\n%s", diff)
	}
	got := DesiredStatus(p, res)
	want := clusterv1beta1.PlacementStatus{
		NumberOfSelectedClusters: 0,
		DecisionGroups:           []clusterv1beta1.DecisionGroupStatus{{DecisionGroupIndex: 0, Decisions: []string{"p-decision-1"}, ClusterCount: 0}},
		Conditions: []metav1.Condition{
			{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionFalse, Reason: clusterv1beta1.PlacementReasonNoManagedClusterMatched,
				Message:            "No ManagedCluster matches any of the cluster predicate; spec.numberOfClusters is 0, so none of the 3 qualifying clusters is chosen",
				ObservedGeneration: 2, LastTransitionTime: t1},
			{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse, Reason: clusterv1beta1.PlacementReasonSucceedConfigured,
				Message: "Placement configurations check pass", ObservedGeneration: 2, LastTransitionTime: t1},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if !statusChanged(p.Status, got) {
		t.Error("statusChanged = false, want true")
	}
}
