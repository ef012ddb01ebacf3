package v1beta1

import "k8s.io/apimachinery/pkg/util/intstr"

// DecisionStrategy divides a placement's chosen clusters into decision groups. Each group's
// PlacementDecisions carry DecisionGroupNameLabel and DecisionGroupIndexLabel, so that a rollout
// (see cluster/v1alpha1 RolloutStrategy) can proceed one group at a time.
type DecisionStrategy struct {
	// GroupStrategy says how the groups are formed.
	// +optional
	GroupStrategy GroupStrategy `json:"groupStrategy,omitempty"`
}

// GroupStrategy forms decision groups: first the named groups, in order (a cluster joins the
// first one whose selector matches), then the remaining clusters; every group is split further so
// that none holds more than clustersPerDecisionGroup clusters.
type GroupStrategy struct {
	// DecisionGroups are the named groups, filled first.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	DecisionGroups []DecisionGroup `json:"decisionGroups,omitempty"`

	// ClustersPerDecisionGroup is the largest group size: a number or a percentage of the chosen
	// clusters from 1% to 100% (default: 100%, one group). With 100 chosen clusters, 20% makes
	// groups of 20. The number 0, like any number at or above the count of chosen clusters, makes
	// one group, as in OCM (clusteradm sends 0); only a negative number is refused.
	// +optional
	// +kubebuilder:default="100%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="clustersPerDecisionGroup may not be negative: give a number of clusters (0 puts every cluster in one group) or a percentage such as 25%"
	ClustersPerDecisionGroup intstr.IntOrString `json:"clustersPerDecisionGroup,omitempty"`
}

// DecisionGroup is a named group of the chosen clusters.
type DecisionGroup struct {
	// GroupName names the group; it becomes the DecisionGroupNameLabel value of the group's
	// PlacementDecisions, so it must be a valid label value.
	// +required
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$`
	GroupName string `json:"groupName"`

	// GroupClusterSelector chooses the group's clusters from the placement's chosen clusters.
	// +required
	GroupClusterSelector GroupClusterSelector `json:"groupClusterSelector"`
}
