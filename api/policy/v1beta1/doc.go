// Package v1beta1 is policy.open-cluster-management.io/v1beta1: PolicySet, a named group of
// Policies in one namespace that a PlacementBinding places together, and whose status sums its
// policies' compliance on the set's clusters, as OCM's (governance-policy-propagator, api/v1beta1).
//
// +kubebuilder:object:generate=true
// +groupName=policy.open-cluster-management.io
package v1beta1
