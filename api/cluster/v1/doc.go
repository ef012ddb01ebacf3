// Package v1 is cluster.open-cluster-management.io/v1: ManagedCluster, the hub's record of one
// spoke cluster — whether the hub accepted it, how to reach its API server, the taints that keep
// placements away from it, and what the spoke reports about itself (conditions, capacity,
// version, claims).
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1
