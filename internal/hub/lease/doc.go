// Package lease is the hub's view of whether an accepted cluster is alive, and the taints that
// keep placements away from clusters that are not.
//
// Liveness comes from the agent renewing the Lease managed-cluster-lease in the cluster's
// namespace every spec.leaseDurationSeconds. Reconciler sets ManagedClusterConditionAvailable to
// Unknown (reason ManagedClusterLeaseUpdateStopped) once the lease is older than
// LeaseGraceFactor (5) periods. It does not poll: each reconcile asks to be called again exactly
// when the lease would expire, and a renewal (a Lease event) starts the count again. Only the agent
// sets Available back to True or False.
//
// TaintReconciler turns the Available condition into the two taints the hub owns: unreachable
// while it is Unknown or missing, unavailable while it is False, neither while it is True. Other
// taints are left alone, and a taint already present keeps its timeAdded, from which placements'
// tolerationSeconds count.
//
// Agents must not add or remove these two taints: the hub gives an agent only the status of its
// ManagedCluster, and the hub's webhook (internal/hub/webhook) refuses an agent's change to spec
// where an administrator granted it more.
package lease
