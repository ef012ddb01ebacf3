// Package v1alpha1 is failover.flotilla.io/v1alpha1, Flotilla's own API for how fast the fleet
// moves work off a cluster it can no longer reach, and how it keeps that work from running twice.
//
// A FailoverPolicy applies to the clusters of one ManagedClusterSet. It sets three durations:
//
//   - leaseDurationSeconds: how often the cluster's agent renews its lease with the hub;
//   - fenceAfterSeconds (F): how long after its last renewal the agent, cut off from the hub, stops
//     the cluster's fenced workloads (suspends Jobs and JobSets, scales others to zero);
//   - lostAfterSeconds (L): how long after the last renewal the hub declares the cluster lost and
//     lets its fenced workloads start elsewhere.
//
// F must be at least two lease periods: the agent renews 1 to 1.25 periods apart (jitter) plus
// the renewal's round trip, so a shorter F rises between the renewals of a cluster that never
// lost the hub and stops its fenced workloads every cycle.
//
// L must be at least F + one lease period + the clock-skew bound (5 s, the hub's tolerance for
// an agent's clock, see internal/hub/lease): the agent counts F from the renewal it last made by
// its own clock, the hub counts L from the renewal time the agent wrote, and in between the agent
// needs up to a lease period to find out that it can no longer renew, and the two clocks may
// differ by the skew bound. With that margin the fenced copy has stopped before the hub lets
// another start. The API server refuses a policy that breaks the rule, and says the rule.
//
// A cluster in several sets with policies gets the shortest lease, the shortest F and the longest
// L of them, which keeps both rules (the shortest F is some policy's F, at least twice that
// policy's lease, which is at least the shortest lease). The hub writes the cluster's effective durations into its
// ManagedCluster's annotations (internal/contract/fencing), where its agent reads them.
//
// +kubebuilder:object:generate=true
// +groupName=failover.flotilla.io
package v1alpha1
