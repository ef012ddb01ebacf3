// Package v1beta2 is cluster.open-cluster-management.io/v1beta2: ManagedClusterSet, a group of
// managed clusters, and ManagedClusterSetBinding, which makes a set usable from a namespace.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1beta2
