package placementview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

func TestNewOutput(t *testing.T) {
	cases := map[string]struct {
		res  scheduler.Result
		want Output
	}{
		"decisions in slice order, warnings in the message": {
			res: scheduler.Result{
				// Decisions in another order than the slices hold them: the slices win.
				Decisions: []scheduler.Decision{
					{ClusterName: "a", Score: 1, Reason: "score 1", DecisionGroupIndex: 1},
					{ClusterName: "b", Score: 2, Reason: "score 2", DecisionGroupIndex: 0, DecisionGroupName: "canary"},
				},
				PlacementDecisions: []scheduler.PlacementDecisionSlice{
					{Name: "p-decision-1", Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "b"}}},
					{Name: "p-decision-2", Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "a"}}},
				},
				Clusters: []scheduler.ClusterExplanation{
					{Name: "a", Selected: true, TotalScore: 1, Rank: 2, Warnings: []string{"AddOn/x/y: missing"},
						Scores: []scheduler.PrioritizerScore{{Prioritizer: "AddOn/x/y", Weight: 1, Score: 1}}},
					{Name: "c", FilteredBy: "Predicate", Message: "label"},
				},
				Conditions: []metav1.Condition{{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue}},
			},
			want: Output{
				Placement: PlacementRef{Namespace: "ns", Name: "p"},
				Decisions: []DecisionOutput{
					{ClusterName: "b", Score: 2, Reason: "score 2", DecisionGroupIndex: 0, DecisionGroupName: "canary"},
					{ClusterName: "a", Score: 1, Reason: "score 1", DecisionGroupIndex: 1},
				},
				Clusters: []ClusterOutput{
					{Name: "a", Selected: true, TotalScore: 1, Message: "warning: AddOn/x/y: missing",
						Scores: []ScoreOutput{{Prioritizer: "AddOn/x/y", Weight: 1, Score: 1}}},
					{Name: "c", FilteredBy: "Predicate", Message: "label", Scores: []ScoreOutput{}},
				},
				Conditions: []metav1.Condition{{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue}},
			},
		},
		"misconfigured: empty lists, never null": {
			res: scheduler.Result{Misconfigured: true},
			want: Output{Placement: PlacementRef{Namespace: "ns", Name: "p"},
				Decisions: []DecisionOutput{}, Clusters: []ClusterOutput{}, Conditions: []metav1.Condition{}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NewOutput("ns", "p", &tc.res)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NewOutput (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSnapshotFrom(t *testing.T) {
	decision := func(ns, placement string, clusters ...string) clusterv1beta1.PlacementDecision {
		d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: placement}}}
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		return d
	}
	objs := &Objects{Decisions: []clusterv1beta1.PlacementDecision{
		decision("apps", "web", "b", "a"),
		decision("apps", "web", "a"),
		decision("apps", "db", "a"),
		decision("other", "web", "a", "c"),
	}}
	got := SnapshotFrom(objs, "apps", "web")
	if diff := cmp.Diff([]string{"a", "b"}, got.CurrentDecisions); diff != "" {
		t.Errorf("CurrentDecisions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"a": 2, "c": 1}, got.OtherDecisionCounts); diff != "" {
		t.Errorf("OtherDecisionCounts (-want +got):\n%s", diff)
	}
}
