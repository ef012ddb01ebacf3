package resource

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	cases := map[string]struct {
		in, want []int64
		missing  []int // indexes of clusters that do not report the resource
	}{
		"empty":                 {in: []int64{}, want: []int64{}},
		"one":                   {in: []int64{7}, want: []int64{100}},
		"all equal":             {in: []int64{4000, 4000, 4000}, want: []int64{100, 100, 100}},
		"min max middle":        {in: []int64{2000, 8000, 5000}, want: []int64{-100, 100, 0}},
		"truncates toward zero": {in: []int64{0, 1, 3, 2}, want: []int64{-100, -33, 100, 33}},
		"unreported left out":   {in: []int64{0, 2000, 8000, 5000}, want: []int64{0, -100, 100, 0}, missing: []int{0}},
		"none reported":         {in: []int64{0, 0}, want: []int64{0, 0}, missing: []int{0, 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := append([]int64{}, tc.in...)
			reported := make([]bool, len(got))
			for i := range reported {
				reported[i] = !slices.Contains(tc.missing, i)
			}
			Normalize(got, reported)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Normalize(%v) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
