package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of a Placement.
const (
	// PlacementConditionSatisfied is True when the placement chose as many clusters as it asked
	// for (every qualifying cluster, or numberOfClusters of them); its reason says why not.
	PlacementConditionSatisfied = "PlacementSatisfied"
	// PlacementConditionMisconfigured is True when the spec names something the scheduler does not
	// know, such as an unknown built-in prioritizer; the message says what.
	PlacementConditionMisconfigured = "PlacementMisconfigured"
)

// Reasons of the PlacementSatisfied condition.
const (
	// PlacementReasonNoManagedClusterSetBindings: no ManagedClusterSet is bound to the namespace.
	PlacementReasonNoManagedClusterSetBindings = "NoManagedClusterSetBindings"
	// PlacementReasonNoIntersection: none of spec.clusterSets is bound to the namespace.
	PlacementReasonNoIntersection = "NoIntersection"
	// PlacementReasonAllManagedClusterSetsEmpty: the usable sets have no member.
	PlacementReasonAllManagedClusterSetsEmpty = "AllManagedClusterSetsEmpty"
	// PlacementReasonNoManagedClusterMatched: no member passed the predicates and tolerations.
	PlacementReasonNoManagedClusterMatched = "NoManagedClusterMatched"
	// PlacementReasonNotAllDecisionsScheduled: fewer clusters qualified than numberOfClusters.
	PlacementReasonNotAllDecisionsScheduled = "NotAllDecisionsScheduled"
	// PlacementReasonAllDecisionsScheduled: the placement is satisfied (condition True).
	PlacementReasonAllDecisionsScheduled = "AllDecisionsScheduled"
)

// Reasons of the PlacementMisconfigured condition, as OCM spells them.
const (
	// PlacementReasonMisconfigured: the spec cannot be applied as written (condition True).
	PlacementReasonMisconfigured = "Misconfigured"
	// PlacementReasonSucceedConfigured: the spec is understood (condition False).
	PlacementReasonSucceedConfigured = "Succeedconfigured"
)

// PlacementStatus is what the scheduler last decided for a placement.
type PlacementStatus struct {
	// NumberOfSelectedClusters is how many clusters the placement chose.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NumberOfSelectedClusters int32 `json:"numberOfSelectedClusters"`

	// DecisionGroups lists the decision groups formed by spec.decisionStrategy and the
	// PlacementDecisions of each; without a decision strategy there is one group, index 0.
	// +optional
	DecisionGroups []DecisionGroupStatus `json:"decisionGroups,omitempty"`

	// Conditions are PlacementSatisfied and PlacementMisconfigured.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastScoreUpdateTime is when the scores in the decisions were last written (see
	// spec.scoreRateLimit).
	// +optional
	LastScoreUpdateTime *metav1.Time `json:"lastScoreUpdateTime,omitempty"`
}

// DecisionGroupStatus is one decision group and the PlacementDecisions holding its clusters.
type DecisionGroupStatus struct {
	// DecisionGroupIndex is the group's index, from 0; the DecisionGroupIndexLabel value of its
	// PlacementDecisions.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DecisionGroupIndex int32 `json:"decisionGroupIndex"`

	// DecisionGroupName is the name of the named group (spec.decisionStrategy) this group comes
	// from; empty for groups of clusters no named group matched.
	// +optional
	DecisionGroupName string `json:"decisionGroupName,omitempty"`

	// Decisions are the names of the group's PlacementDecisions.
	// +optional
	Decisions []string `json:"decisions,omitempty"`

	// ClusterCount is how many clusters the group holds, at most clustersPerDecisionGroup.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	ClusterCount int32 `json:"clusterCount,omitempty"`
}
