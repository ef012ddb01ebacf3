// Package v1alpha1 is cluster.open-cluster-management.io/v1alpha1: ClusterClaim (a fact a spoke
// states about itself), AddOnPlacementScore (scores placements can rank clusters by), and the
// rollout strategy types that ManifestWorkReplicaSet and add-on installs share.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1alpha1
