// Package v1alpha1 is dynamic-scoring.open-cluster-management.io/v1alpha1, OCM contrib's dynamic
// scoring: a DynamicScorer describes a scoring service that turns metrics (for example from
// Prometheus) into cluster scores, which a spoke agent publishes as AddOnPlacementScores for
// Placements to rank clusters by; a DynamicScoringConfig filters which scores are computed.
//
// +kubebuilder:object:generate=true
// +groupName=dynamic-scoring.open-cluster-management.io
package v1alpha1
