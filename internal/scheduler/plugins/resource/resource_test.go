package resource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	cases := map[string]struct {
		in, want []int64
	}{
		"empty":          {[]int64{}, []int64{}},
		"one":            {[]int64{7}, []int64{100}},
		"all equal":      {[]int64{4000, 4000, 4000}, []int64{100, 100, 100}},
		"min max middle": {[]int64{2000, 8000, 5000}, []int64{-100, 100, 0}},
		"truncates":      {[]int64{0, 1, 3}, []int64{-100, -33, 100}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := append([]int64{}, tc.in...)
			Normalize(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Normalize(%v) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
