// Package failover keeps each ManagedCluster's fencing Timing (internal/contract/fencing) current on the
// hub: the FailoverPolicies of the sets the cluster belongs to, combined (shortest lease and
// fence, longest loss), or the defaults (lease 5 s, fence 20 s, lost 30 s) for a cluster that
// runs fenced work under no policy: a ManifestWork annotated failover.flotilla.io/fenced in its
// namespace. The cluster's agent reads the Timing from its ManagedCluster's annotations, renews
// its lease at the Timing's period and fences its workloads after FenceAfter; the hub's lease
// controller (internal/hub/lease) declares the cluster lost after LostAfter and raises its epoch.
//
// It also reports on each FailoverPolicy how many clusters it applies to, and whether its set
// exists.
package failover
