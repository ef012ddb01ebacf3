package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AddOnPlacementScore is a set of named scores for one managed cluster, written by an add-on (for
// example a resource-usage scorer) into the cluster's namespace on the hub. Placements rank
// clusters by these scores through AddOn prioritizers and read them in CEL selectors. It has no
// spec: everything is status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type AddOnPlacementScore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Status holds the scores and how long they stay valid.
	// +optional
	Status AddOnPlacementScoreStatus `json:"status,omitempty"`
}

// AddOnPlacementScoreStatus is the scores of one cluster.
type AddOnPlacementScoreStatus struct {
	// Conditions report the state of the scorer that writes this object.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Scores are the cluster's scores, one per name. Scorers with per-node or per-dimension
	// scores write many, so the list is not bounded here.
	// +optional
	// +listType=map
	// +listMapKey=name
	Scores []AddOnPlacementScoreItem `json:"scores,omitempty"`

	// ValidUntil is when the scores expire: after it placements treat every score as 0. Unset
	// means they never expire; the scorer should keep them fresh.
	// +optional
	ValidUntil *metav1.Time `json:"validUntil,omitempty"`
}

// AddOnPlacementScoreItem is one named score.
type AddOnPlacementScoreItem struct {
	// Name of the score, such as gpuClusterAvailable; prioritizers refer to it as scoreName.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name"`

	// Value of the score, from MinScore (-100, worst) to MaxScore (100, best).
	// +required
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	Value int32 `json:"value"`
}

// The range of a score's value.
const (
	// MinScore is the lowest score value.
	MinScore = -100
	// MaxScore is the highest score value.
	MaxScore = 100
)

// ResourceUsageScoreName is the name of the AddOnPlacementScore the resource-usage scorer writes
// (every 60 s) in each cluster's namespace.
const ResourceUsageScoreName = "resource-usage-score"

// Score names written by the resource-usage scorer. "Node" is the best single node's free
// resource, "Cluster" the sum over nodes, normalised against fixed maxima.
const (
	ScoreCPUNodeAvailable    = "cpuNodeAvailable"
	ScoreCPUClusterAvailable = "cpuClusterAvailable"
	ScoreMemNodeAvailable    = "memNodeAvailable"
	ScoreMemClusterAvailable = "memClusterAvailable"
	ScoreGPUNodeAvailable    = "gpuNodeAvailable"
	ScoreGPUClusterAvailable = "gpuClusterAvailable"
	ScoreTPUNodeAvailable    = "tpuNodeAvailable"
	ScoreTPUClusterAvailable = "tpuClusterAvailable"
)

// AddOnPlacementScoreList is a list of AddOnPlacementScores.
//
// +kubebuilder:object:root=true
type AddOnPlacementScoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AddOnPlacementScore `json:"items"`
}
