package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// ManifestWorkReplicaSet deploys one workload to every cluster a set of Placements (in the same
// namespace) selects: for each selected cluster it creates a ManifestWork from
// spec.manifestWorkTemplate in that cluster's namespace, rolls template changes out per each
// placement's rollout strategy, and deletes the ManifestWork when the cluster is no longer
// selected or the set is deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName={mwrs}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Placement",type="string",JSONPath=".status.conditions[?(@.type==\"PlacementVerified\")].reason",description="Reason"
// +kubebuilder:printcolumn:name="Found",type="string",JSONPath=".status.conditions[?(@.type==\"PlacementVerified\")].status",description="Configured"
// +kubebuilder:printcolumn:name="ManifestWorks",type="string",JSONPath=".status.conditions[?(@.type==\"ManifestworkApplied\")].reason",description="Reason"
// +kubebuilder:printcolumn:name="Applied",type="string",JSONPath=".status.conditions[?(@.type==\"ManifestworkApplied\")].status",description="Applied"
type ManifestWorkReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the workload, the placements that choose its clusters, and how deletion cascades.
	// +required
	Spec ManifestWorkReplicaSetSpec `json:"spec"`

	// Status summarizes the ManifestWorks created, overall and per placement.
	// +optional
	Status ManifestWorkReplicaSetStatus `json:"status,omitempty"`
}

// ManifestWorkReplicaSetSpec is what to deploy, where, and how deletion cascades.
type ManifestWorkReplicaSetSpec struct {
	// ManifestWorkTemplate is the spec of the ManifestWork created for every selected cluster.
	// +optional
	ManifestWorkTemplate workv1.ManifestWorkSpec `json:"manifestWorkTemplate,omitzero"`

	// PlacementRefs name the Placements, in this namespace, whose decisions choose the clusters;
	// the workload goes to the union of their clusters. Each Placement may be named once.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.name == p.name))",message="placementRefs names the same Placement twice: list each Placement once"
	PlacementRefs []LocalPlacementReference `json:"placementRefs"`

	// CascadeDeletionPolicy says whether deleting the set waits for its ManifestWorks:
	// Background (default) removes the set at once and its ManifestWorks afterwards; Foreground
	// keeps the set until every ManifestWork is gone.
	// +required
	// +kubebuilder:default=Background
	CascadeDeletionPolicy CascadeDeletionPolicy `json:"cascadeDeletionPolicy"`
}

// CascadeDeletionPolicy says whether deleting a ManifestWorkReplicaSet waits for its ManifestWorks
// to be deleted.
// +kubebuilder:validation:Enum=Background;Foreground
type CascadeDeletionPolicy string

const (
	// Background deletes the ManifestWorkReplicaSet at once; its ManifestWorks are deleted after.
	Background CascadeDeletionPolicy = "Background"
	// Foreground keeps the ManifestWorkReplicaSet until its ManifestWorks are gone.
	Foreground CascadeDeletionPolicy = "Foreground"
)

// LocalPlacementReference names a Placement in the ManifestWorkReplicaSet's namespace and says how
// changes reach the clusters it selects.
type LocalPlacementReference struct {
	// Name is the Placement's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// RolloutStrategy says how a new or changed template reaches the Placement's clusters: all at
	// once (default), a few at a time, or one decision group at a time.
	// +optional
	// +kubebuilder:default={type: All, all: {progressDeadline: None}}
	RolloutStrategy clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitzero"`
}

// Condition types of a ManifestWorkReplicaSet (status.conditions).
const (
	// ManifestWorkReplicaSetConditionPlacementVerified is True when every referenced Placement
	// exists and has decisions.
	ManifestWorkReplicaSetConditionPlacementVerified = "PlacementVerified"
	// ManifestWorkReplicaSetConditionPlacementRolledOut is True when the rollout has reached
	// every selected cluster.
	ManifestWorkReplicaSetConditionPlacementRolledOut = "PlacementRolledOut"
	// ManifestWorkReplicaSetConditionManifestworkApplied is True when the ManifestWorks are
	// created and applied as expected.
	ManifestWorkReplicaSetConditionManifestworkApplied = "ManifestworkApplied"
)

// Condition reasons of a ManifestWorkReplicaSet.
const (
	// ReasonAsExpected means the condition holds (placements verified, ManifestWorks applied).
	ReasonAsExpected = "AsExpected"
	// ReasonPlacementDecisionNotFound means a referenced Placement or its decisions do not exist.
	ReasonPlacementDecisionNotFound = "PlacementDecisionNotFound"
	// ReasonPlacementDecisionEmpty means a referenced Placement selects no cluster.
	ReasonPlacementDecisionEmpty = "PlacementDecisionEmpty"
	// ReasonNotAsExpected means some ManifestWorks are not applied.
	ReasonNotAsExpected = "NotAsExpected"
	// ReasonProcessing means the ManifestWorks are being created or updated.
	ReasonProcessing = "Processing"
	// ReasonProgressing means the rollout is still under way.
	ReasonProgressing = "Progressing"
	// ReasonComplete means the rollout has reached every selected cluster.
	ReasonComplete = "Complete"
)

// ManifestWorkReplicaSetStatus summarizes the ManifestWorks a set created.
type ManifestWorkReplicaSetStatus struct {
	// Conditions: PlacementVerified, PlacementRolledOut and ManifestworkApplied.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// PlacementsSummary has one entry per placementRefs entry.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	PlacementsSummary []PlacementSummary `json:"placementSummary,omitempty"`

	// Summary counts the ManifestWorks of all placements together.
	// +optional
	Summary ManifestWorkReplicaSetSummary `json:"summary,omitempty"`
}

// PlacementSummary is the state of the rollout to one placement's clusters.
type PlacementSummary struct {
	// Name is the Placement's name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// AvailableDecisionGroups is how many of the placement's decision groups have every
	// ManifestWork Available, out of how many, for example "2/4".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	AvailableDecisionGroups string `json:"availableDecisionGroups,omitempty"`

	// Summary counts the placement's ManifestWorks.
	// +optional
	Summary ManifestWorkReplicaSetSummary `json:"summary,omitempty"`
}

// ManifestWorkReplicaSetSummary counts ManifestWorks by state.
type ManifestWorkReplicaSetSummary struct {
	// Total is how many ManifestWorks the set manages now.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Total int `json:"total"`

	// DesiredTotal is how many ManifestWorks the set will have once the rollout is done.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DesiredTotal int `json:"desiredTotal"`

	// Applied is how many ManifestWorks have condition Applied True.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Applied int `json:"applied"`

	// Available is how many ManifestWorks have condition Available True.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Available int `json:"available"`

	// Degraded is how many ManifestWorks have condition Degraded True.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Degraded int `json:"degraded"`

	// Progressing is how many ManifestWorks have condition Progressing True.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Progressing int `json:"progressing"`

	// Updated is how many clusters run the current template.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Updated int `json:"updated"`
}

// ManifestWorkReplicaSetList is a list of ManifestWorkReplicaSets.
//
// +kubebuilder:object:root=true
type ManifestWorkReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManifestWorkReplicaSet `json:"items"`
}
