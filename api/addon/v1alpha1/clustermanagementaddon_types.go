package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

// ClusterManagementAddOn announces an add-on on the hub: what it is, which configuration kinds
// it accepts and on which clusters it is installed. Its name is the add-on's name, which every
// ManagedClusterAddOn of the add-on shares.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={cma,cmas}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="DISPLAY NAME",type="string",JSONPath=".spec.addOnMeta.displayName"
// +kubebuilder:printcolumn:name="CRD NAME",type="string",JSONPath=".spec.addOnConfiguration.crdName"
type ClusterManagementAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the add-on and where to install it.
	// +required
	Spec ClusterManagementAddOnSpec `json:"spec"`

	// Status reports the default configurations and the install progress per placement.
	// +optional
	Status ClusterManagementAddOnStatus `json:"status,omitempty"`
}

// ClusterManagementAddOnSpec describes an add-on and where to install it.
type ClusterManagementAddOnSpec struct {
	// AddOnMeta is the add-on's display name and description.
	// +optional
	AddOnMeta AddOnMeta `json:"addOnMeta,omitempty"`

	// AddOnConfiguration names the CRD that configures the add-on.
	// Deprecated: use supportedConfigs.
	// +optional
	AddOnConfiguration ConfigCoordinates `json:"addOnConfiguration,omitempty"`

	// SupportedConfigs are the configuration kinds the add-on accepts, at most one entry per
	// group and resource, each with an optional default object. Empty: the add-on takes no
	// configuration.
	// +optional
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	// +kubebuilder:validation:MaxItems=32
	SupportedConfigs []ConfigMeta `json:"supportedConfigs,omitempty"`

	// InstallStrategy says on which clusters the hub creates a ManagedClusterAddOn for the add-on:
	// none (Manual, the default) or those the listed Placements select.
	// +optional
	// +kubebuilder:default={type:Manual}
	InstallStrategy InstallStrategy `json:"installStrategy,omitempty"`
}

// InstallStrategyType says how an add-on comes to be installed on clusters.
// +kubebuilder:validation:Enum=Manual;Placements
type InstallStrategyType string

const (
	// InstallStrategyManual installs nowhere by itself: users create ManagedClusterAddOns.
	InstallStrategyManual InstallStrategyType = "Manual"
	// InstallStrategyPlacements installs on every cluster the strategy's placements select, and
	// removes the add-on from clusters they no longer select.
	InstallStrategyPlacements InstallStrategyType = "Placements"
)

// InstallStrategy says on which clusters an add-on is installed, and how changes roll out.
//
// +kubebuilder:validation:XValidation:rule="!has(self.placements) || size(self.placements) == 0 || (has(self.type) && self.type == 'Placements')",message="spec.installStrategy.placements is only used when spec.installStrategy.type is Placements: set type to Placements, or remove placements"
type InstallStrategy struct {
	// Type is Manual (default: no automatic install) or Placements (install on the clusters the
	// placements select).
	// +optional
	// +kubebuilder:default=Manual
	Type InstallStrategyType `json:"type,omitempty"`

	// Placements select the clusters to install on when Type is Placements, one entry per
	// placement namespace and name. When a cluster is selected by several, the later entry's
	// configs and rollout strategy win.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Placements []PlacementStrategy `json:"placements,omitempty"`
}

// PlacementRef names a Placement.
type PlacementRef struct {
	// Namespace of the Placement.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// Name of the Placement.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// PlacementStrategy installs an add-on on the clusters one Placement selects, with the
// configuration to install with and how configuration changes roll out.
type PlacementStrategy struct {
	PlacementRef `json:",inline"`

	// Configs are the configuration objects the selected clusters' add-ons start with; a
	// ManagedClusterAddOn's own spec.configs override them.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Configs []AddOnConfig `json:"configs,omitempty"`

	// RolloutStrategy says how a change of these configs reaches the selected clusters; only
	// configuration named in the ClusterManagementAddOn is rolled out this way.
	// +optional
	// +kubebuilder:default={type:All}
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || (has(self.type) && self.type == 'Progressive')",message="rolloutStrategy.progressive is only used when rolloutStrategy.type is Progressive: set type to Progressive, or remove progressive"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || (has(self.type) && self.type == 'ProgressivePerGroup')",message="rolloutStrategy.progressivePerGroup is only used when rolloutStrategy.type is ProgressivePerGroup: set type to ProgressivePerGroup, or remove progressivePerGroup"
	RolloutStrategy clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitempty"`
}

// ClusterManagementAddOnStatus is the observed state of an add-on across the fleet.
type ClusterManagementAddOnStatus struct {
	// DefaultConfigReferences are the default configurations in effect, with the spec hash the
	// hub computed for each.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	DefaultConfigReferences []DefaultConfigReference `json:"defaultconfigReferences,omitempty"`

	// InstallProgressions report, per install placement, the configurations being rolled out and
	// how far the rollout has got.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	InstallProgressions []InstallProgression `json:"installProgressions,omitempty"`
}

// DefaultConfigReference is a default configuration in effect and the hash of its spec.
type DefaultConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// DesiredConfig is the default configuration object and the hash of its current spec.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`
}

// InstallProgression is the rollout state of one install placement.
type InstallProgression struct {
	PlacementRef `json:",inline"`

	// ConfigReferences are the configurations rolled out to this placement's clusters.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	ConfigReferences []InstallConfigReference `json:"configReferences,omitempty"`

	// Conditions: Progressing is True while the add-on is installed or upgraded on the
	// placement's clusters (reasons Installing, Upgrading) and False once done
	// (InstallSucceed, UpgradeSucceed, InstallFailed, UpgradeFailed).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// InstallConfigReference follows one configuration through a placement's rollout.
type InstallConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// DesiredConfig is the configuration version being rolled out.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// LastAppliedConfig is the version every one of the placement's ManagedClusterAddOns has
	// applied.
	// +optional
	LastAppliedConfig *ConfigSpecHash `json:"lastAppliedConfig,omitempty"`

	// LastKnownGoodConfig is the last version that rolled out successfully; a failed rollout
	// can go back to it.
	// +optional
	LastKnownGoodConfig *ConfigSpecHash `json:"lastKnownGoodConfig,omitempty"`
}

// Reasons of the Progressing condition of an install progression and of a ManagedClusterAddOn.
const (
	// ProgressingReasonInstalling: the add-on is being installed for the first time.
	ProgressingReasonInstalling = "Installing"
	// ProgressingReasonInstallSucceed: the first install finished.
	ProgressingReasonInstallSucceed = "InstallSucceed"
	// ProgressingReasonInstallFailed: the first install failed or timed out.
	ProgressingReasonInstallFailed = "InstallFailed"
	// ProgressingReasonUpgrading: a new configuration version is being applied.
	ProgressingReasonUpgrading = "Upgrading"
	// ProgressingReasonUpgradeSucceed: the new configuration version is applied.
	ProgressingReasonUpgradeSucceed = "UpgradeSucceed"
	// ProgressingReasonUpgradeFailed: applying the new configuration version failed or timed out.
	ProgressingReasonUpgradeFailed = "UpgradeFailed"
	// ProgressingReasonConfigurationUnsupported: a configuration names a kind the add-on does
	// not accept.
	ProgressingReasonConfigurationUnsupported = "ConfigurationUnsupported"
)

// ClusterManagementAddOnList is a list of ClusterManagementAddOns.
//
// +kubebuilder:object:root=true
type ClusterManagementAddOnList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterManagementAddOn `json:"items"`
}
