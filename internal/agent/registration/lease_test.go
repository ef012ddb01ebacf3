package registration

import (
	"testing"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// Renewals come one to 1.25 lease periods apart, spread over that range, and even with a
// renewal that takes its whole timeout stay well inside the hub's LeaseGraceFactor periods.
func TestLeaseInterval(t *testing.T) {
	for _, period := range []time.Duration{time.Second, 10 * time.Second, time.Minute, time.Hour} {
		lowest, highest := time.Duration(1<<62), time.Duration(0)
		for range 2000 {
			d := leaseInterval(period)
			if d < period || d > period+period/4 {
				t.Fatalf("leaseInterval(%s) = %s, want %s to %s", period, d, period, period+period/4)
			}
			lowest, highest = min(lowest, d), max(highest, d)
		}
		// 2000 draws cover most of the range: agents started together drift apart.
		if spread := highest - lowest; spread < period/5 {
			t.Errorf("leaseInterval(%s) spans only %s over 2000 draws, want most of %s", period, spread, period/4)
		}
		worst := period + period/4 + leaseRequestTimeout(period)
		if grace := clusterv1.LeaseGraceFactor * period; worst > grace*2/3 {
			t.Errorf("with a lease period of %s renewals may be %s apart, too near the hub's %s", period, worst, grace)
		}
	}
}
