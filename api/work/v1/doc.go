// Package v1 is work.open-cluster-management.io/v1: ManifestWork, a set of Kubernetes objects the
// hub asks one managed cluster to apply (it lives in that cluster's namespace on the hub), and
// AppliedManifestWork, the spoke's record of what it applied for a ManifestWork.
//
// +kubebuilder:object:generate=true
// +groupName=work.open-cluster-management.io
package v1
