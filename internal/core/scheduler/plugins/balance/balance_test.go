package balance

import "testing"

func TestScore(t *testing.T) {
	cases := map[string]struct {
		count, maxCount int
		want            int64
	}{
		"nobody decided":     {0, 0, 100},
		"no decisions here":  {0, 4, 100},
		"the busiest":        {4, 4, -100},
		"half the busiest":   {2, 4, 0},
		"a quarter":          {1, 4, 50},
		"truncated as OCM's": {1, 3, 32},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Score(tc.count, tc.maxCount); got != tc.want {
				t.Errorf("Score(%d, %d) = %d, want %d", tc.count, tc.maxCount, got, tc.want)
			}
		})
	}
}
