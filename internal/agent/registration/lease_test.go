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

// A ManagedCluster read with a new lease period wakes the lease loop, whichever loop read it
// (the status loop shares without waking the others); the same period read again does not.
func TestShareClusterSignalsANewPeriod(t *testing.T) {
	withPeriod := func(rv string, seconds int32) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{}
		mc.ResourceVersion, mc.Spec.LeaseDurationSeconds = rv, seconds
		return mc
	}
	steps := []struct {
		mc     *clusterv1.ManagedCluster
		notify bool
		wake   bool
	}{
		{withPeriod("1", 60), true, true},  // the first read
		{withPeriod("2", 60), true, false}, // a new version, the same period
		{withPeriod("3", 5), false, true},  // shortened, read by the status loop
		{withPeriod("3", 5), true, false},  // the same again
		{withPeriod("4", 30), true, true},  // lengthened
	}
	a := &Agent{}
	for i, s := range steps {
		changed := a.period.Changed()
		a.shareCluster(s.mc, s.notify)
		woke := false
		select {
		case <-changed:
			woke = true
		default:
		}
		if woke != s.wake {
			t.Errorf("step %d (period %ds): lease loop woken %v, want %v", i, s.mc.Spec.LeaseDurationSeconds, woke, s.wake)
		}
		if got, want := a.leasePeriod(), time.Duration(s.mc.Spec.LeaseDurationSeconds)*time.Second; got != want {
			t.Errorf("step %d: lease period %s, want %s", i, got, want)
		}
	}
}
