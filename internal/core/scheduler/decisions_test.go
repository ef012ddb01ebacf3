package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

func decisionSlice(ns, name, placement string, clusters ...string) clusterv1beta1.PlacementDecision {
	d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if placement != "" {
		d.Labels = map[string]string{clusterv1beta1.PlacementLabel: placement}
	}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}

func TestDecisionInputs(t *testing.T) {
	decisions := []clusterv1beta1.PlacementDecision{
		decisionSlice("team-a", "gpu-decision-1", "gpu", "east", "west"),
		decisionSlice("team-a", "gpu-decision-2", "gpu", "edge", "east"), // east twice: counts once
		decisionSlice("team-a", "cpu-decision-1", "cpu", "east"),
		decisionSlice("team-b", "gpu-decision-1", "gpu", "east", "edge"), // same name, other namespace: another placement
		decisionSlice("team-a", "stray", "", "west"),                     // no placement label: nobody's
	}
	current, others := DecisionInputs("team-a", "gpu", decisions)
	if diff := cmp.Diff([]string{"east", "edge", "west"}, current); diff != "" {
		t.Errorf("current (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"east": 2, "edge": 1}, others); diff != "" {
		t.Errorf("others (-want +got):\n%s", diff)
	}
}

func TestCurrentClusterDecisions(t *testing.T) {
	pd := func(ns, owner string, ds ...clusterv1beta1.ClusterDecision) clusterv1beta1.PlacementDecision {
		d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: owner + "-decision-1",
			Labels: map[string]string{clusterv1beta1.PlacementLabel: owner}}}
		d.Status.Decisions = ds
		return d
	}
	a := clusterv1beta1.ClusterDecision{ClusterName: "a", Score: 3, Reason: "score 3"}
	b := clusterv1beta1.ClusterDecision{ClusterName: "b", Score: 5}
	cases := map[string]struct {
		decisions []clusterv1beta1.PlacementDecision
		want      []clusterv1beta1.ClusterDecision
	}{
		"none: empty, not nil": {want: []clusterv1beta1.ClusterDecision{}},
		"mine, sorted, once":   {decisions: []clusterv1beta1.PlacementDecision{pd("apps", "p", b, a), pd("apps", "p", a)}, want: []clusterv1beta1.ClusterDecision{a, b}},
		"others ignored":       {decisions: []clusterv1beta1.PlacementDecision{pd("apps", "q", a), pd("other", "p", b)}, want: []clusterv1beta1.ClusterDecision{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CurrentClusterDecisions("apps", "p", tc.decisions)
			if got == nil {
				t.Fatal("CurrentClusterDecisions() = nil, want non-nil")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CurrentClusterDecisions() (-want +got):\n%s", diff)
			}
		})
	}
}
