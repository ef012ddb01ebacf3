// Package v1beta1 is cluster.open-cluster-management.io/v1beta1: Placement, a rule that chooses
// ManagedClusters from the sets bound to its namespace, and PlacementDecision, the scheduler's
// answer (the chosen clusters, at most 100 per object, labeled with the placement's name).
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1beta1
