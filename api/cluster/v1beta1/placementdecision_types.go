package v1beta1

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxDecisionsPerPlacementDecision is how many clusters one PlacementDecision holds at most; a
// placement with more clusters has several.
const MaxDecisionsPerPlacementDecision = 100

// PlacementDecisionName is the name of a placement's index-th PlacementDecision (index from 1):
// "<placement>-decision-<index>".
func PlacementDecisionName(placement string, index int) string {
	return fmt.Sprintf("%s-decision-%d", placement, index)
}

// PlacementDecision holds up to 100 of the clusters a Placement chose. It is written by the
// scheduler, owned by the Placement and labeled PlacementLabel=<placement name> (and, with a
// decision strategy, DecisionGroupNameLabel and DecisionGroupIndexLabel). Together a placement's
// decisions list numberOfClusters clusters, or every qualifying cluster when that is unset.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type PlacementDecision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Status holds the decisions.
	// +optional
	Status PlacementDecisionStatus `json:"status,omitempty"`
}

// PlacementDecisionStatus is a slice of a placement's decisions.
type PlacementDecisionStatus struct {
	// Decisions are the chosen clusters, at most 100. A cluster appears at most once across all of
	// a placement's decisions. Write an empty list, not null, when there are none.
	// +required
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(d, size(d.clusterName) == 0 || self.exists_one(e, e.clusterName == d.clusterName))",message="decisions must not name a cluster twice: keep one decision per clusterName"
	Decisions []ClusterDecision `json:"decisions"`
}

// ClusterDecision is one chosen cluster. An empty clusterName is a slot not yet filled.
type ClusterDecision struct {
	// ClusterName is the chosen ManagedCluster's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	ClusterName string `json:"clusterName"`

	// Reason explains why the cluster was chosen (for example which predicate matched and the
	// score); may be empty.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`

	// Score is the cluster's total score, the sum of weight x score over the prioritizers.
	// +optional
	Score int64 `json:"score,omitempty"`
}

// PlacementDecisionList is a list of PlacementDecisions.
//
// +kubebuilder:object:root=true
type PlacementDecisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the placement decisions.
	Items []PlacementDecision `json:"items"`
}
