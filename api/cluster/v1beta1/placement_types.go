package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Well-known labels and annotations of placements and their decisions.
const (
	// PlacementLabel on a PlacementDecision names the Placement (in the same namespace) whose
	// decision it holds. Consumers find a placement's decisions by this label.
	PlacementLabel = "cluster.open-cluster-management.io/placement"

	// DecisionGroupNameLabel on a PlacementDecision is the name of the decision group its clusters
	// belong to (spec.decisionStrategy.groupStrategy.decisionGroups[].groupName); empty for the
	// groups made of the clusters no named group matched.
	DecisionGroupNameLabel = "cluster.open-cluster-management.io/decision-group-name"

	// DecisionGroupIndexLabel on a PlacementDecision is the index (0, 1, ...) of the decision group
	// its clusters belong to, as a decimal string.
	DecisionGroupIndexLabel = "cluster.open-cluster-management.io/decision-group-index"

	// PlacementDisableAnnotation set to "true" on a Placement makes the scheduler skip it: its
	// decisions are left as they are. It is experimental in OCM and kept for compatibility.
	PlacementDisableAnnotation = "cluster.open-cluster-management.io/experimental-scheduling-disable"
)

// Placement chooses ManagedClusters for workloads in its namespace. The candidates are the members
// of the ManagedClusterSets bound to the namespace (by ManagedClusterSetBindings), narrowed to
// spec.clusterSets when set; predicates and tolerations filter them, prioritizers rank them, and
// the first spec.numberOfClusters are chosen. The result is written to PlacementDecisions labeled
// PlacementLabel=<placement name>; a cluster leaving them should have its workloads removed.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Succeeded",type="string",JSONPath=".status.conditions[?(@.type==\"PlacementSatisfied\")].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"PlacementSatisfied\")].reason"
// +kubebuilder:printcolumn:name="SelectedClusters",type="integer",JSONPath=".status.numberOfSelectedClusters"
type Placement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which clusters to choose and how to rank them.
	// +required
	Spec PlacementSpec `json:"spec"`

	// Status reports how many clusters were chosen, in which decision groups, and why not more.
	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// PlacementSpec is the rule a placement chooses clusters by. Its parts are ANDed; an empty spec
// chooses every cluster of the sets bound to the namespace. FederatedLearning reuses it to place
// its clients.
type PlacementSpec struct {
	// ClusterSets narrows the candidates to these ManagedClusterSets (by name). Only sets that are
	// also bound to the namespace count; empty means every bound set.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
	ClusterSets []string `json:"clusterSets,omitempty"`

	// NumberOfClusters is how many clusters to choose: the best-ranked ones when more qualify, all
	// of them (and PlacementSatisfied=False) when fewer do. Unset chooses every cluster that
	// qualifies; 0 chooses none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NumberOfClusters *int32 `json:"numberOfClusters,omitempty"`

	// Predicates filter the candidates; a cluster qualifies when it matches any one of them (they
	// are ORed). No predicate lets every candidate through.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Predicates []ClusterPredicate `json:"predicates,omitempty"`

	// PrioritizerPolicy says which prioritizers rank the qualifying clusters and with what weight.
	// Unset means mode Additive with the default prioritizers (Balance and Steady, weight 1).
	// +optional
	PrioritizerPolicy PrioritizerPolicy `json:"prioritizerPolicy,omitempty"`

	// SpreadPolicy spreads the chosen clusters evenly over topologies such as regions or zones.
	// +optional
	SpreadPolicy SpreadPolicy `json:"spreadPolicy,omitempty"`

	// Tolerations let clusters with matching taints be chosen (taints with effect NoSelect or
	// NoSelectIfNew filter clusters out otherwise).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// DecisionStrategy divides the chosen clusters into decision groups, for rollouts that proceed
	// one group at a time.
	// +optional
	DecisionStrategy DecisionStrategy `json:"decisionStrategy,omitempty"`

	// SortBy orders the clusters inside the PlacementDecisions: ClusterName (default, by name) or
	// Score (best score first, ties by name).
	// +optional
	// +kubebuilder:default=ClusterName
	SortBy DecisionSortBy `json:"sortBy,omitempty"`

	// ScoreRateLimit is the shortest time between score-only updates of the decisions, as a
	// duration such as 1m (default), 30s or 2h. Changes to the chosen set are written at once.
	// +optional
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[0-9]+[hms]$`
	ScoreRateLimit string `json:"scoreRateLimit,omitempty"`
}

// DecisionSortBy is the order of clusters inside a placement's decisions.
// +kubebuilder:validation:Enum=ClusterName;Score
type DecisionSortBy string

const (
	// SortByClusterName orders decisions by cluster name, ascending.
	SortByClusterName DecisionSortBy = "ClusterName"
	// SortByScore orders decisions by score, highest first, then by cluster name.
	SortByScore DecisionSortBy = "Score"
)

// PlacementList is a list of Placements.
//
// +kubebuilder:object:root=true
type PlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the placements.
	Items []Placement `json:"items"`
}
