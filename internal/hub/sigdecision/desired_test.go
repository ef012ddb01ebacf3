package sigdecision

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

func ocmSlice(name string, clusters ...string) clusterv1beta1.PlacementDecision {
	d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "why " + c, Score: 7})
	}
	return d
}

func slice(name string, index int, clusters ...string) scheduler.PlacementDecisionSlice {
	s := scheduler.PlacementDecisionSlice{Name: name, Labels: labelsFor("p", index), Decisions: []clusterv1beta1.ClusterDecision{}}
	for _, c := range clusters {
		s.Decisions = append(s.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "why " + c})
	}
	return s
}

func sig(ns string, s scheduler.PlacementDecisionSlice, scheduler string) multiclusterv1alpha1.PlacementDecision {
	return multiclusterv1alpha1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels},
		Decisions: sigDecisions(ns, s), SchedulerName: scheduler}
}

func TestDesired(t *testing.T) {
	cases := map[string]struct {
		ocm  []clusterv1beta1.PlacementDecision
		want []scheduler.PlacementDecisionSlice
	}{
		"none": {want: []scheduler.PlacementDecisionSlice{}},
		"one empty slice": {
			ocm:  []clusterv1beta1.PlacementDecision{ocmSlice("p-decision-1")},
			want: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0)},
		},
		"numeric order, order within a slice kept, score dropped": {
			ocm: []clusterv1beta1.PlacementDecision{ocmSlice("p-decision-10", "j"), ocmSlice("p-decision-2", "z", "b"),
				ocmSlice("other"), ocmSlice("p-decision-1", "a")},
			want: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, "a"), slice("p-decision-2", 1, "z", "b"),
				slice("p-decision-10", 2, "j"), slice("other", 3)},
		},
		"a decision without a cluster is skipped": {
			ocm:  []clusterv1beta1.PlacementDecision{ocmSlice("p-decision-1", "a", "", "b")},
			want: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, "a", "b")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Desired("p", tc.ocm)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestSigDecisions(t *testing.T) {
	long := fmt.Sprintf("%01100d", 0)
	got := sigDecisions("ns", scheduler.PlacementDecisionSlice{Decisions: []clusterv1beta1.ClusterDecision{
		{ClusterName: "a", Reason: "r"}, {ClusterName: "b", Reason: long}}})
	want := []multiclusterv1alpha1.ClusterDecision{
		{ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: "a", Namespace: "ns"}, Reason: "r"},
		{ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: "b", Namespace: "ns"}, Reason: long[:maxReason]},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// step shows a step as "write NAME[index]: clusters" or "delete NAME".
func step(delete bool, s scheduler.PlacementDecisionSlice) string {
	if delete {
		return "delete " + s.Name
	}
	var cs []string
	for _, d := range s.Decisions {
		cs = append(cs, d.ClusterName)
	}
	return fmt.Sprintf("write %s[%s]: %v", s.Name, s.Labels[multiclusterv1alpha1.LabelDecisionIndex], cs)
}

func TestSteps(t *testing.T) {
	hundred := func(prefix string) []string {
		var out []string
		for i := range 100 {
			out = append(out, fmt.Sprintf("%s%03d", prefix, i))
		}
		return out
	}
	a, b := hundred("a"), hundred("b")
	cases := map[string]struct {
		current []multiclusterv1alpha1.PlacementDecision
		desired []scheduler.PlacementDecisionSlice
		want    []string
	}{
		"up to date": {
			current: []multiclusterv1alpha1.PlacementDecision{sig("ns", slice("p-decision-1", 0, "a"), SchedulerName)},
			desired: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, "a")},
		},
		"created": {
			desired: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, "a")},
			want:    []string{"write p-decision-1[0]: [a]"},
		},
		"another schedulerName is rewritten": {
			current: []multiclusterv1alpha1.PlacementDecision{sig("ns", slice("p-decision-1", 0, "a"), "someone")},
			desired: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, "a")},
			want:    []string{"write p-decision-1[0]: [a]"},
		},
		"a reference to another namespace is rewritten": {
			current: []multiclusterv1alpha1.PlacementDecision{sig("elsewhere", slice("p-decision-1", 0, "a"), SchedulerName)},
			desired: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, "a")},
			want:    []string{"write p-decision-1[0]: [a]"},
		},
		"the slice taking a cluster is written before the one giving it, surplus deleted last": {
			current: []multiclusterv1alpha1.PlacementDecision{
				sig("ns", slice("p-decision-1", 0, "a", "b"), SchedulerName),
				sig("ns", slice("p-decision-2", 1, "c"), SchedulerName),
				sig("ns", slice("p-decision-3", 2, "d"), SchedulerName)},
			desired: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, "a"), slice("p-decision-2", 1, "b", "c")},
			want:    []string{"write p-decision-2[1]: [b c]", "write p-decision-1[0]: [a]", "delete p-decision-3"},
		},
		"two full slices swapping park clusters in a spare with its own index": {
			current: []multiclusterv1alpha1.PlacementDecision{
				sig("ns", slice("p-decision-1", 0, a...), SchedulerName),
				sig("ns", slice("p-decision-2", 1, b...), SchedulerName)},
			desired: []scheduler.PlacementDecisionSlice{slice("p-decision-1", 0, b...), slice("p-decision-2", 1, a...)},
			want: []string{
				step(false, slice("p-decision-3", 2, a...)),
				step(false, slice("p-decision-1", 0, b...)),
				step(false, slice("p-decision-2", 1, a...)),
				"delete p-decision-3",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, st := range Steps("ns", tc.current, tc.desired) {
				got = append(got, step(st.Delete, st.Slice))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if up := UpToDate("ns", tc.current, tc.desired); up != (len(tc.want) == 0) {
				t.Errorf("UpToDate = %v with steps %v", up, got)
			}
		})
	}
}
