// Package v1alpha1 is federation-ai.open-cluster-management.io/v1alpha1: FederatedLearning, a
// federated training job whose server (the aggregator) runs on the hub and whose clients run on
// the clusters that hold the training data, chosen by a placement, so that the data never leaves
// its cluster.
//
// +kubebuilder:object:generate=true
// +groupName=federation-ai.open-cluster-management.io
package v1alpha1
