package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of a ManifestWork (status.conditions).
const (
	// WorkApplied is True when every object of the workload has been applied on the managed
	// cluster.
	WorkApplied = "Applied"
	// WorkProgressing is True while objects of the workload are still being applied.
	WorkProgressing = "Progressing"
	// WorkAvailable is True when every object of the workload exists on the managed cluster.
	WorkAvailable = "Available"
	// WorkDegraded is True when the objects have not reached the desired state for some time.
	WorkDegraded = "Degraded"
	// WorkComplete is True when every object with a Complete condition rule has completed; see
	// deleteOption.ttlSecondsAfterFinished.
	WorkComplete = "Complete"
	// WorkDeleting is True while the ManifestWork is being deleted and its objects removed.
	WorkDeleting = "Deleting"
)

// Condition types of one manifest (status.resourceStatus.manifests[].conditions). Condition rules
// may add conditions of any other name.
const (
	// ManifestApplied is True when the object has been applied on the managed cluster.
	ManifestApplied = "Applied"
	// ManifestProgressing is True while the object is being applied.
	ManifestProgressing = "Progressing"
	// ManifestAvailable is True when the object exists on the managed cluster.
	ManifestAvailable = "Available"
	// ManifestDegraded is True when the object has not reached the desired state for some time.
	ManifestDegraded = "Degraded"
	// ManifestComplete is True when the object's Complete condition rule holds; the object is no
	// longer updated afterwards.
	ManifestComplete = "Complete"
	// ManifestStatusFeedbackSynced is True when the feedback rules' values were read from the
	// object; False when a value could not be read (for example its path leads to an object).
	ManifestStatusFeedbackSynced = "StatusFeedbackSynced"
)

// ManifestWorkStatus is what the work agent observed on the managed cluster.
type ManifestWorkStatus struct {
	// Conditions of the whole workload: Applied, Available, Progressing, Degraded, Complete and
	// Deleting (see the Work* constants), and any a condition rule sets.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=64
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ResourceStatus is the state of each object of the workload.
	// +optional
	ResourceStatus ManifestResourceStatus `json:"resourceStatus,omitzero"`
}

// ManifestResourceStatus is the state of each object of a workload on the managed cluster.
type ManifestResourceStatus struct {
	// Manifests holds one entry per object of the workload.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Manifests []ManifestCondition `json:"manifests,omitempty"`
}

// ManifestCondition is the state of one applied object.
type ManifestCondition struct {
	// ResourceMeta identifies the object and its place in spec.workload.manifests.
	// +required
	ResourceMeta ManifestResourceMeta `json:"resourceMeta"`

	// StatusFeedbacks holds the status values the object's feedback rules asked for.
	// +optional
	StatusFeedbacks StatusFeedbackResult `json:"statusFeedback,omitzero"`

	// Conditions of the object: Applied, Available, Progressing, Degraded, StatusFeedbackSynced
	// (see the Manifest* constants) and any its condition rules set.
	// +required
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=64
	Conditions []metav1.Condition `json:"conditions"`
}

// ManifestResourceMeta identifies an applied object: its index in spec.workload.manifests and
// its group, version, kind, resource, name and namespace.
type ManifestResourceMeta struct {
	// Ordinal is the object's index in spec.workload.manifests, from 0.
	// +required
	// +kubebuilder:validation:Minimum=0
	Ordinal int32 `json:"ordinal"`

	// Group is the object's API group; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the object's API version.
	// +optional
	Version string `json:"version,omitempty"`

	// Kind is the object's kind.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Resource is the object's resource (plural, lower case).
	// +optional
	Resource string `json:"resource,omitempty"`

	// Name is the object's name.
	// +optional
	Name string `json:"name,omitempty"`

	// Namespace is the object's namespace; empty for a cluster-scoped object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// StatusFeedbackResult holds the status values reported for one object.
type StatusFeedbackResult struct {
	// Values are the reported values, one per name given in the feedback rules (or per field a
	// WellKnownStatus rule reports).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Values []FeedbackValue `json:"values,omitempty"`
}

// FeedbackValue is one reported status value.
type FeedbackValue struct {
	// Name is the value's name: the jsonPaths name of the feedback rule, or the field name for
	// WellKnownStatus (for example succeeded).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value is the value read from the object's status.
	// +required
	Value FieldValue `json:"fieldValue"`
}

// ValueType is the type of a reported status value.
// +kubebuilder:validation:Enum=Integer;String;Boolean;JsonRaw
type ValueType string

const (
	// Integer values are in fieldValue.integer.
	Integer ValueType = "Integer"
	// String values are in fieldValue.string.
	String ValueType = "String"
	// Boolean values are in fieldValue.boolean.
	Boolean ValueType = "Boolean"
	// JSONRaw values (lists and objects) are JSON text in fieldValue.jsonRaw.
	JSONRaw ValueType = "JsonRaw"
)

// FieldValue is a status value: its type, and the one field of that type holding it.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'Integer' ? has(self.integer) : self.type == 'String' ? has(self.string) : self.type == 'Boolean' ? has(self.boolean) : has(self.jsonRaw)",message="fieldValue must hold the field its type names: integer for Integer, string for String, boolean for Boolean, jsonRaw for JsonRaw"
type FieldValue struct {
	// Type is Integer, String, Boolean or JsonRaw, and says which field holds the value.
	// +required
	Type ValueType `json:"type"`

	// Integer is the value when type is Integer.
	// +optional
	Integer *int64 `json:"integer,omitempty"`

	// String is the value when type is String.
	// +optional
	String *string `json:"string,omitempty"`

	// Boolean is the value when type is Boolean.
	// +optional
	Boolean *bool `json:"boolean,omitempty"`

	// JSONRaw is the value, as JSON text, when type is JsonRaw (a list or an object).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	JSONRaw *string `json:"jsonRaw,omitempty"`
}
