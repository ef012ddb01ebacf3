package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

func TestGroupSize(t *testing.T) {
	cases := map[string]struct {
		v       intstr.IntOrString
		total   int
		want    int
		wantErr bool
	}{
		"unset is all":                {intstr.IntOrString{}, 10, 10, false},
		"empty string (as OCM)":       {intstr.FromString(""), 10, 0, true},
		"zero is all (as OCM)":        {intstr.FromInt32(0), 10, 10, false},
		"number":                      {intstr.FromInt32(3), 10, 3, false},
		"number above total":          {intstr.FromInt32(30), 10, 10, false},
		"number as a string (as OCM)": {intstr.FromString("4"), 10, 0, true},
		"fractional percent":          {intstr.FromString("12.5%"), 10, 2, false},
		"percent rounds up":           {intstr.FromString("25%"), 10, 3, false},
		"zero percent is all":         {intstr.FromString("0%"), 10, 10, false},
		"hundred percent":             {intstr.FromString("100%"), 10, 10, false},
		"neither number nor pct":      {intstr.FromString("lots"), 10, 0, true},
		"bad percent":                 {intstr.FromString("x%"), 10, 0, true},
		"no clusters, one group":      {intstr.FromInt32(3), 0, 0, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := GroupSize(tc.v, tc.total)
			if (err != nil) != tc.wantErr {
				t.Fatalf("GroupSize(%v, %d) error = %v, want error %v", tc.v.String(), tc.total, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("GroupSize(%v, %d) = %d, want %d", tc.v.String(), tc.total, got, tc.want)
			}
		})
	}
}

func TestSplitGroups(t *testing.T) {
	clusters := func(specs ...string) []*clusterv1.ManagedCluster {
		var out []*clusterv1.ManagedCluster
		for _, s := range specs {
			name, zone, _ := strings.Cut(s, " ")
			out = append(out, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": zone}}})
		}
		return out
	}
	zone := func(group, z string) clusterv1beta1.DecisionGroup {
		return clusterv1beta1.DecisionGroup{GroupName: group,
			GroupClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"zone": z}}}}
	}
	cases := map[string]struct {
		strategy clusterv1beta1.GroupStrategy
		selected []*clusterv1.ManagedCluster
		want     []DecisionGroup
	}{
		"no cluster: one empty group": {
			want: []DecisionGroup{{Index: 0, Clusters: []string{}}},
		},
		"sorted by name, one group": {
			selected: clusters("c a", "a a", "b b"),
			want:     []DecisionGroup{{Index: 0, Clusters: []string{"a", "b", "c"}}},
		},
		"named first, first match wins, rest last": {
			strategy: clusterv1beta1.GroupStrategy{DecisionGroups: []clusterv1beta1.DecisionGroup{zone("one", "a"), zone("again", "a"), zone("two", "b")}},
			selected: clusters("z x", "c a", "a a", "b b"),
			want: []DecisionGroup{
				{Index: 0, Name: "one", Clusters: []string{"a", "c"}},
				{Index: 1, Name: "two", Clusters: []string{"b"}},
				{Index: 2, Name: "", Clusters: []string{"z"}},
			},
		},
		"size applies within each group": {
			strategy: clusterv1beta1.GroupStrategy{DecisionGroups: []clusterv1beta1.DecisionGroup{zone("one", "a")}, ClustersPerDecisionGroup: intstr.FromInt32(2)},
			selected: clusters("a1 a", "a2 a", "a3 a", "x1 x"),
			want: []DecisionGroup{
				{Index: 0, Name: "one", Clusters: []string{"a1", "a2"}},
				{Index: 1, Name: "one", Clusters: []string{"a3"}},
				{Index: 2, Name: "", Clusters: []string{"x1"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := newGrouper(tc.strategy)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, g.split(tc.selected)); diff != "" {
				t.Errorf("split() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSlicePlacementDecisions(t *testing.T) {
	names := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%03d", prefix, i)
		}
		return out
	}
	groups := []DecisionGroup{{Index: 0, Name: "canary", Clusters: names("a", 3)}, {Index: 1, Clusters: names("b", 250)}}
	byName := map[string]Decision{"a000": {ClusterName: "a000", Score: 7, Reason: "score 7 = Steady 7"}}
	got := SlicePlacementDecisions("web", groups, byName)
	type slice struct {
		Name        string
		Labels      map[string]string
		First, Last string
		Count       int
	}
	var gotSlices []slice
	for _, s := range got {
		gotSlices = append(gotSlices, slice{s.Name, s.Labels, s.Decisions[0].ClusterName, s.Decisions[len(s.Decisions)-1].ClusterName, len(s.Decisions)})
	}
	labels := func(name, index string) map[string]string {
		return map[string]string{clusterv1beta1.PlacementLabel: "web", clusterv1beta1.DecisionGroupNameLabel: name, clusterv1beta1.DecisionGroupIndexLabel: index}
	}
	want := []slice{
		{"web-decision-1", labels("canary", "0"), "a000", "a002", 3},
		{"web-decision-2", labels("", "1"), "b000", "b099", 100},
		{"web-decision-3", labels("", "1"), "b100", "b199", 100},
		{"web-decision-4", labels("", "1"), "b200", "b249", 50},
	}
	if diff := cmp.Diff(want, gotSlices); diff != "" {
		t.Errorf("SlicePlacementDecisions() mismatch (-want +got):\n%s", diff)
	}
	if d := got[0].Decisions[0]; d.Score != 7 || d.Reason != "score 7 = Steady 7" {
		t.Errorf("first decision = %+v, want score 7 and its reason", d)
	}
}
