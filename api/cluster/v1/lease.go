package v1

import "time"

// LeaseDuration is how often the cluster's agent renews its lease on the hub:
// spec.leaseDurationSeconds, or DefaultLeaseDurationSeconds when that is unset (zero or less).
// The hub gives up on the agent after LeaseGraceFactor such periods without a renewal.
func (mc *ManagedCluster) LeaseDuration() time.Duration {
	seconds := mc.Spec.LeaseDurationSeconds
	if seconds <= 0 {
		seconds = DefaultLeaseDurationSeconds
	}
	return time.Duration(seconds) * time.Second
}
