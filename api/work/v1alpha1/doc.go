// Package v1alpha1 is work.open-cluster-management.io/v1alpha1: ManifestWorkReplicaSet, which
// stamps one ManifestWork from a template into the namespace of every cluster that Placements
// select, rolls changes out over them per a rollout strategy, and removes the ManifestWorks when
// clusters leave the placements or the set is deleted.
//
// +kubebuilder:object:generate=true
// +groupName=work.open-cluster-management.io
package v1alpha1
