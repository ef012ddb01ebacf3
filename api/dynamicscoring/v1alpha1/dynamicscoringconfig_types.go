package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DynamicScoringConfig filters the scores the Dynamic Scoring Agents compute: its masks say which
// scores matter for which clusters, so the agents skip the rest.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type DynamicScoringConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the masks.
	// +optional
	Spec DynamicScoringConfigSpec `json:"spec,omitempty"`

	// Status is reserved for the observed state; it has no fields yet.
	// +optional
	Status DynamicScoringConfigStatus `json:"status,omitempty"`
}

// DynamicScoringConfigSpec lists the masks that filter scores.
type DynamicScoringConfigSpec struct {
	// Masks filter out scores: each names a score and a cluster that does not compute it (as
	// OCM contrib's hub reads them); scores no mask names are computed everywhere.
	// +optional
	Masks []ScoreMask `json:"masks,omitempty"`
}

// ScoreMask filters out one score on one cluster.
type ScoreMask struct {
	// ClusterName is the ManagedCluster that does not compute the score.
	// +required
	// +kubebuilder:validation:MaxLength=253
	ClusterName string `json:"clusterName"`

	// ScoreName is the name of the score filtered out (a DynamicScorer's score name).
	// +required
	// +kubebuilder:validation:MaxLength=253
	ScoreName string `json:"scoreName"`
}

// DynamicScoringConfigStatus is the observed state of a DynamicScoringConfig; it has no fields
// yet.
type DynamicScoringConfigStatus struct{}

// DynamicScoringConfigList is a list of DynamicScoringConfigs.
//
// +kubebuilder:object:root=true
type DynamicScoringConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DynamicScoringConfig `json:"items"`
}
