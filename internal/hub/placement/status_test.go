package placement

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/scheduler"
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
