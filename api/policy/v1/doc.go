// Package v1 is policy.open-cluster-management.io/v1, OCM's governance API as the Flotilla hub
// serves it: Policy, which wraps policy templates (a ConfigurationPolicy, or any other policy
// engine's kind) that the clusters evaluate, and PlacementBinding, which binds a Placement in its
// own namespace to Policies and PolicySets (v1beta1).
//
// A Policy written by a user is a root policy. The hub (internal/hub/policy) copies it into the
// namespace of every cluster its bindings' Placements decide, as the replicated policy
// <namespace>.<name> with the labels RootPolicyLabel, ClusterNameLabel and ClusterNamespaceLabel;
// the cluster's governance-policy-framework add-on writes the replicated policy's status
// (compliant, details per template with their history), and the hub sums the clusters' states
// into the root policy's status (compliant, placement, status per cluster).
//
// The kinds, field names, labels and status fields are OCM's
// (open-cluster-management.io/governance-policy-propagator, api/v1), so OCM's policies, its
// policy-collection and its policy generator's output apply unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=policy.open-cluster-management.io
package v1
