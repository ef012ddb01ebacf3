package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutType is how a rollout proceeds over a placement's decision groups.
// +kubebuilder:validation:Enum=All;Progressive;ProgressivePerGroup
type RolloutType string

const (
	// All applies to every selected cluster at once.
	All RolloutType = "All"
	// Progressive applies to clusters a few at a time (maxConcurrency), mandatory groups first.
	Progressive RolloutType = "Progressive"
	// ProgressivePerGroup applies one decision group at a time, mandatory groups first.
	ProgressivePerGroup RolloutType = "ProgressivePerGroup"
)

// RolloutStrategy says how a change reaches the clusters a placement selected. It is shared by
// ManifestWorkReplicaSet and add-on installs.
type RolloutStrategy struct {
	// Type is All (default), Progressive or ProgressivePerGroup.
	// +optional
	// +kubebuilder:default=All
	Type RolloutType `json:"type,omitempty"`

	// All configures the All type.
	// +optional
	All *RolloutAll `json:"all,omitempty"`

	// Progressive configures the Progressive type.
	// +optional
	Progressive *RolloutProgressive `json:"progressive,omitempty"`

	// ProgressivePerGroup configures the ProgressivePerGroup type.
	// +optional
	ProgressivePerGroup *RolloutProgressivePerGroup `json:"progressivePerGroup,omitempty"`
}

// RolloutConfig holds what every rollout type shares.
type RolloutConfig struct {
	// MinSuccessTime is how long a cluster must stay successful before the rollout moves on, as a
	// duration such as 5m; 0 (default) moves on at once.
	// +optional
	// +kubebuilder:default="0"
	MinSuccessTime metav1.Duration `json:"minSuccessTime,omitempty"`

	// ProgressDeadline is how long a cluster may take to succeed before it counts as failed, as a
	// duration such as 10m, or None (default) to wait for ever.
	// +optional
	// +kubebuilder:default=None
	// +kubebuilder:validation:Pattern="^(([0-9])+[h|m|s])|None$"
	ProgressDeadline string `json:"progressDeadline,omitempty"`

	// MaxFailures is how many clusters (a number, or a percentage such as 10%) may fail before the
	// rollout stops; 0 (default) stops at the first failure.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	MaxFailures intstr.IntOrString `json:"maxFailures,omitempty"`
}

// MandatoryDecisionGroup names a decision group that must succeed before the rest start.
type MandatoryDecisionGroup struct {
	// GroupName is the decision group's name.
	// +optional
	GroupName string `json:"groupName,omitempty"`

	// GroupIndex is the decision group's index; used when GroupName is empty.
	// +optional
	GroupIndex int32 `json:"groupIndex,omitempty"`
}

// MandatoryDecisionGroups lists the groups a rollout starts with.
type MandatoryDecisionGroups struct {
	// MandatoryDecisionGroups are rolled out first, in order, and must all succeed.
	// +optional
	MandatoryDecisionGroups []MandatoryDecisionGroup `json:"mandatoryDecisionGroups,omitempty"`
}

// RolloutAll configures the All rollout type.
type RolloutAll struct {
	RolloutConfig `json:",inline"`
}

// RolloutProgressivePerGroup configures the ProgressivePerGroup rollout type.
type RolloutProgressivePerGroup struct {
	RolloutConfig           `json:",inline"`
	MandatoryDecisionGroups `json:",inline"`
}

// RolloutProgressive configures the Progressive rollout type.
type RolloutProgressive struct {
	RolloutConfig           `json:",inline"`
	MandatoryDecisionGroups `json:",inline"`

	// MaxConcurrency is how many clusters (a number, or a percentage such as 25%) change at once.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	MaxConcurrency intstr.IntOrString `json:"maxConcurrency,omitempty"`
}
