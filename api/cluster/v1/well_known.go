package v1

// Condition types of a ManagedCluster (status.conditions[].type).
const (
	// ManagedClusterConditionJoined is True once the agent has joined the hub: it holds a hub
	// certificate and the hub accepted the cluster.
	ManagedClusterConditionJoined = "ManagedClusterJoined"
	// ManagedClusterConditionHubAccepted is True while spec.hubAcceptsClient is true and the hub
	// has set the cluster up (namespace, agent permissions).
	ManagedClusterConditionHubAccepted = "HubAcceptedManagedCluster"
	// ManagedClusterConditionHubDenied is True when the hub withdrew or refused acceptance.
	ManagedClusterConditionHubDenied = "HubDeniedManagedCluster"
	// ManagedClusterConditionAvailable says whether the cluster's API server is healthy: the agent
	// sets True or False from its health probe; the hub sets Unknown when the lease is not renewed.
	ManagedClusterConditionAvailable = "ManagedClusterConditionAvailable"
	// ManagedClusterConditionClockSynced is False when the cluster's clock is too far from the
	// hub's for leases to be judged.
	ManagedClusterConditionClockSynced = "ManagedClusterConditionClockSynced"
)

// ManagedClusterConditionDeleting is OCM's condition of a ManagedCluster being deleted: False,
// reason ConditionDeletingReasonResourceRemaining, while objects in the cluster's namespace (its
// ManagedClusterAddOns and ManifestWorks) are still being removed; True, reason
// ConditionDeletingReasonNoResource, once none is left.
const (
	ManagedClusterConditionDeleting          = "Deleting"
	ConditionDeletingReasonResourceRemaining = "ResourceRemaining"
	ConditionDeletingReasonNoResource        = "NoResource"
)

// ManagedClusterReasonLeaseUpdateStopped is the reason the hub gives when it sets
// ManagedClusterConditionAvailable to Unknown because the agent stopped renewing its lease.
const ManagedClusterReasonLeaseUpdateStopped = "ManagedClusterLeaseUpdateStopped"

// Taints the hub manages itself; agents may neither add nor remove them.
const (
	// ManagedClusterTaintUnreachable is set, with effect NoSelect, while the Available condition is
	// Unknown or missing.
	ManagedClusterTaintUnreachable = "cluster.open-cluster-management.io/unreachable"
	// ManagedClusterTaintUnavailable is set, with effect NoSelect, while the Available condition is
	// False.
	ManagedClusterTaintUnavailable = "cluster.open-cluster-management.io/unavailable"
)

// Lease heartbeat.
const (
	// ManagedClusterLeaseName is the name of the Lease the agent renews in the cluster's namespace
	// on the hub.
	ManagedClusterLeaseName = "managed-cluster-lease"
	// DefaultLeaseDurationSeconds is the lease period used when spec.leaseDurationSeconds is 0.
	DefaultLeaseDurationSeconds = 60
	// LeaseGraceFactor is how many lease periods may pass without a renewal before the hub sets
	// the Available condition to Unknown.
	LeaseGraceFactor = 5
)

// Well-known resource names in status.capacity and status.allocatable.
const (
	// ResourceCPU is CPU, in cores.
	ResourceCPU ResourceName = "cpu"
	// ResourceMemory is memory, in bytes.
	ResourceMemory ResourceName = "memory"
	// ResourceNvidiaGPU is NVIDIA GPUs, in devices.
	ResourceNvidiaGPU ResourceName = "nvidia.com/gpu"
)
