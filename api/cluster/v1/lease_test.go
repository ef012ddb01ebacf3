package v1

import (
	"testing"
	"time"
)

func TestLeaseDuration(t *testing.T) {
	tests := map[string]struct {
		seconds int32
		want    time.Duration
	}{
		"unset":    {seconds: 0, want: 60 * time.Second},
		"negative": {seconds: -5, want: 60 * time.Second},
		"one":      {seconds: 1, want: time.Second},
		"set":      {seconds: 300, want: 5 * time.Minute},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			mc := &ManagedCluster{Spec: ManagedClusterSpec{LeaseDurationSeconds: tc.seconds}}
			if got := mc.LeaseDuration(); got != tc.want {
				t.Errorf("LeaseDuration() with spec.leaseDurationSeconds=%d = %s, want %s", tc.seconds, got, tc.want)
			}
		})
	}
}
