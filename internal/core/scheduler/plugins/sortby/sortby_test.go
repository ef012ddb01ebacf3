package sortby

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

func TestCompare(t *testing.T) {
	in := []clusterv1beta1.ClusterDecision{{ClusterName: "c", Score: 5}, {ClusterName: "a", Score: 1}, {ClusterName: "d", Score: 9}, {ClusterName: "b", Score: 5}}
	cases := map[string]struct {
		factory framework.Factory
		want    []string
	}{
		"ClusterName": {NewByName, []string{"a", "b", "c", "d"}},
		"Score":       {NewByScore, []string{"d", "b", "c", "a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pl, err := tc.factory(nil, framework.Args{})
			if err != nil {
				t.Fatal(err)
			}
			ds := slices.Clone(in)
			slices.SortFunc(ds, pl.(framework.OrderPlugin).Compare)
			var got []string
			for _, d := range ds {
				got = append(got, d.ClusterName)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}
