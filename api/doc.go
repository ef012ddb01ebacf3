// Package api holds Flotilla's API types: the Open Cluster Management kinds, wire-compatible with
// OCM's published CRDs, and the kinds of the projects around it (SIG-Multicluster ClusterProfile
// and PlacementDecision, OCM contrib's FederatedLearning and dynamic scoring). There is one
// package per group/version; deepcopy functions and the CRDs in config/crd are generated from the
// kubebuilder markers by `make generate`.
//
// Compatibility with OCM is checked field by field against the reference CRDs; deliberate
// differences are listed in docs/compatibility.md.
package api
