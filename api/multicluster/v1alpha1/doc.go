// Package v1alpha1 is multicluster.x-k8s.io/v1alpha1, the Kubernetes SIG-Multicluster APIs:
// ClusterProfile, one cluster of the fleet as the inventory presents it to consumers, and the
// KEP-5313 PlacementDecision, the clusters a scheduler chose, which consumers read to dispatch
// work.
//
// +kubebuilder:object:generate=true
// +groupName=multicluster.x-k8s.io
package v1alpha1
