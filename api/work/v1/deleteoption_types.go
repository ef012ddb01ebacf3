package v1

// DeletePropagationPolicyType says what happens to applied objects when their ManifestWork goes.
// +kubebuilder:validation:Enum=Foreground;Orphan;SelectivelyOrphan
type DeletePropagationPolicyType string

const (
	// DeletePropagationPolicyTypeForeground deletes every applied object, and keeps the
	// ManifestWork until they are gone. It is the default.
	DeletePropagationPolicyTypeForeground DeletePropagationPolicyType = "Foreground"
	// DeletePropagationPolicyTypeOrphan leaves every applied object on the managed cluster.
	DeletePropagationPolicyTypeOrphan DeletePropagationPolicyType = "Orphan"
	// DeletePropagationPolicyTypeSelectivelyOrphan leaves the objects listed in
	// selectivelyOrphans.orphaningRules and deletes the rest. It is meant for handing an object
	// over to another ManifestWork: the new work adopts it, then the old one drops it.
	DeletePropagationPolicyTypeSelectivelyOrphan DeletePropagationPolicyType = "SelectivelyOrphan"
)

// DeleteOption says what happens to the applied objects when the ManifestWork is deleted (or an
// object is removed from its workload), and when a completed ManifestWork is deleted by itself.
//
// +kubebuilder:validation:XValidation:rule="!has(self.selectivelyOrphans) || (has(self.propagationPolicy) && self.propagationPolicy == 'SelectivelyOrphan')",message="deleteOption.selectivelyOrphans is only used with propagationPolicy SelectivelyOrphan: set propagationPolicy to SelectivelyOrphan, or remove selectivelyOrphans"
type DeleteOption struct {
	// PropagationPolicy is Foreground (default: delete every applied object), Orphan (leave them
	// all) or SelectivelyOrphan (leave those in selectivelyOrphans, delete the rest).
	// +optional
	// +kubebuilder:default=Foreground
	PropagationPolicy DeletePropagationPolicyType `json:"propagationPolicy,omitempty"`

	// SelectivelyOrphans lists the objects to leave behind with propagationPolicy
	// SelectivelyOrphan.
	// +optional
	SelectivelyOrphans *SelectivelyOrphan `json:"selectivelyOrphans,omitempty"`

	// TTLSecondsAfterFinished deletes the ManifestWork this many seconds after it became Complete
	// (a conditionRule set the Complete condition); 0 deletes it as soon as it completes. Unset
	// keeps a completed ManifestWork until someone deletes it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int64 `json:"ttlSecondsAfterFinished,omitempty"`
}

// SelectivelyOrphan lists the applied objects to leave on the managed cluster when the
// ManifestWork is deleted.
type SelectivelyOrphan struct {
	// OrphaningRules each name one object of this ManifestWork's workload to leave behind.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	OrphaningRules []OrphaningRule `json:"orphaningRules,omitempty"`
}

// OrphaningRule names one object of the workload to leave on the managed cluster.
type OrphaningRule struct {
	// Group is the object's API group; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`

	// Resource is the object's resource (plural, lower case), for example deployments.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Resource string `json:"resource"`

	// Name is the object's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace is the object's namespace; empty for a cluster-scoped object.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}
