package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

const (
	// LabelPlacementKey on a PlacementDecision identifies the placement (the scheduling request)
	// it answers, so consumers can list every decision for one placement.
	LabelPlacementKey = "multicluster.x-k8s.io/placement-key"
	// LabelDecisionKey on a PlacementDecision ties together the slices of one decision: when a
	// decision takes more than one slice, the scheduler must set the same value on all of them.
	LabelDecisionKey = "multicluster.x-k8s.io/decision-key"
	// LabelDecisionIndex on a PlacementDecision is the slice's 0-based position among the slices
	// of its decision.
	LabelDecisionIndex = "multicluster.x-k8s.io/decision-index"
)

// MaxDecisionsPerSlice is the most clusters one PlacementDecision may list; a larger decision is
// split into several slices sharing a LabelDecisionKey.
const MaxDecisionsPerSlice = 100

// PlacementDecision (KEP-5313) publishes the clusters a scheduler chose at one point in time. It
// only carries data: schedulers write it and consumers read it, so choosing clusters is decoupled
// from dispatching work to them. Like EndpointSlices, one decision may span several objects
// (slices) of at most MaxDecisionsPerSlice clusters, labeled with LabelDecisionKey and
// LabelDecisionIndex. Its fields sit at the top level: it has no spec and no status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type PlacementDecision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Decisions are the clusters chosen, at most 100 per slice to stay well under the etcd
	// object size limit. Write an empty list, not null, when no cluster was chosen.
	// +required
	// +kubebuilder:validation:MinItems=0
	// +kubebuilder:validation:MaxItems=100
	Decisions []ClusterDecision `json:"decisions"`

	// SchedulerName names the scheduler that wrote the decision, for debugging and auditing.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SchedulerName string `json:"schedulerName,omitempty"`
}

// ClusterDecision is one chosen cluster: the ClusterProfile to deploy to and why it was chosen.
type ClusterDecision struct {
	// ClusterProfileRef is the ClusterProfile of the chosen cluster.
	// +required
	ClusterProfileRef ClusterProfileReference `json:"clusterProfileRef"`

	// Reason says why the scheduler chose this cluster, for debugging and auditing.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
}

// ClusterProfileReference names a ClusterProfile.
type ClusterProfileReference struct {
	// Name of the ClusterProfile.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the ClusterProfile; when empty, the PlacementDecision's own namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// PlacementDecisionList is a list of PlacementDecisions.
//
// +kubebuilder:object:root=true
type PlacementDecisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlacementDecision `json:"items"`
}
