package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConfigurationPolicy says which objects a cluster must have, must not have or must have exactly,
// and whether the cluster's config-policy-controller only reports (inform) or also puts right
// (enforce) what differs. It is a Policy's template, evaluated on each cluster the Policy is
// placed on (internal/agent/builtin/configpolicy).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=configurationpolicies,scope=Namespaced
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
type ConfigurationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ConfigurationPolicySpec `json:"spec,omitempty"`
	// +optional
	Status ConfigurationPolicyStatus `json:"status,omitempty"`
}

// ConfigurationPolicySpec is what the cluster's objects are checked against.
type ConfigurationPolicySpec struct {
	// CustomMessage replaces the compliance message (Go templates are not evaluated by Flotilla).
	// +optional
	CustomMessage CustomMessage `json:"customMessage,omitempty"`
	// +optional
	Severity Severity `json:"severity,omitempty"`
	// RemediationAction inform reports; enforce creates, updates and deletes to comply.
	// +required
	// +kubebuilder:default=inform
	RemediationAction RemediationAction `json:"remediationAction"`
	// EvaluationInterval is how often a compliant and a non-compliant policy is evaluated again
	// ("10s", "1h", "never"; "watch" and unset: on every change, and at least every 10 s here).
	// +optional
	EvaluationInterval EvaluationInterval `json:"evaluationInterval,omitempty"`
	// PruneObjectBehavior: what happens to the objects the policy matched when it is deleted.
	// +optional
	// +kubebuilder:default:=None
	PruneObjectBehavior PruneObjectBehavior `json:"pruneObjectBehavior,omitempty"`
	// NamespaceSelector chooses the namespaces of namespaced object templates that name none.
	// +optional
	NamespaceSelector Target `json:"namespaceSelector,omitempty"`
	// ObjectTemplates are the objects checked.
	// +optional
	ObjectTemplates []*ObjectTemplate `json:"object-templates,omitempty"` //nolint:tagliatelle // OCM's field name
	// ObjectTemplatesRaw is the object templates as YAML text, for cluster templates that make
	// several (a range): used when object-templates is empty.
	// +optional
	ObjectTemplatesRaw string `json:"object-templates-raw,omitempty"` //nolint:tagliatelle // OCM's field name
}

// CustomMessage replaces the compliance message.
type CustomMessage struct {
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// +optional
	NonCompliant string `json:"noncompliant,omitempty"`
}

// Severity is how serious a violation is.
//
// +kubebuilder:validation:Enum=low;Low;medium;Medium;high;High;critical;Critical
type Severity string

// PruneObjectBehavior is what happens to matched objects when the policy is deleted.
//
// +kubebuilder:validation:Enum=DeleteAll;DeleteIfCreated;None
type PruneObjectBehavior string

const (
	PruneNone            PruneObjectBehavior = "None"
	PruneDeleteIfCreated PruneObjectBehavior = "DeleteIfCreated"
	PruneDeleteAll       PruneObjectBehavior = "DeleteAll"
)

// Target selects namespaces: by name globs (include, exclude) and by labels.
type Target struct {
	*metav1.LabelSelector `json:",inline"`

	// Include are globs of namespace names ("kube-*").
	// +optional
	Include []NonEmptyString `json:"include,omitempty"`
	// Exclude are globs of namespace names left out.
	// +optional
	Exclude []NonEmptyString `json:"exclude,omitempty"`
	// TerminatingInclusion says whether terminating namespaces are selected.
	// +optional
	// +kubebuilder:default:=Default
	// +kubebuilder:validation:Enum=IfMatch;Never;Default
	TerminatingInclusion string `json:"terminatingInclusion,omitempty"`
}

// NonEmptyString is a string of at least one character.
//
// +kubebuilder:validation:MinLength=1
type NonEmptyString string

// EvaluationInterval is how often a policy is evaluated again, per compliance.
type EvaluationInterval struct {
	// +optional
	// +kubebuilder:validation:Pattern=`^(?:(?:(?:[0-9]+(?:.[0-9])?)(?:h|m|s|(?:ms)|(?:us)|(?:ns)))|never|watch)+$`
	Compliant string `json:"compliant,omitempty"`
	// +optional
	// +kubebuilder:validation:Pattern=`^(?:(?:(?:[0-9]+(?:.[0-9])?)(?:h|m|s|(?:ms)|(?:us)|(?:ns)))|never|watch)+$`
	NonCompliant string `json:"noncompliant,omitempty"`
}

// ComplianceType is musthave, mustonlyhave or mustnothave (OCM accepts three spellings each).
type ComplianceType string

const (
	MustHave     ComplianceType = "musthave"
	MustOnlyHave ComplianceType = "mustonlyhave"
	MustNotHave  ComplianceType = "mustnothave"
)

// RecordDiff says where the difference between an object and its template is recorded.
//
// +kubebuilder:validation:Enum=Log;InStatus;None
type RecordDiff string

// RecordDiff values: unset records as InStatus does (never for a Secret).
const (
	RecordDiffLog      RecordDiff = "Log"
	RecordDiffInStatus RecordDiff = "InStatus"
	RecordDiffNone     RecordDiff = "None"
)

// RecreateOption says whether an object that cannot be updated is deleted and created again.
//
// +kubebuilder:validation:Enum=None;IfRequired;Always
type RecreateOption string

// ObjectTemplate is one object (or, without a name, every object of its kind) checked.
type ObjectTemplate struct {
	// +required
	// +kubebuilder:validation:Enum=MustHave;Musthave;musthave;MustOnlyHave;Mustonlyhave;mustonlyhave;MustNotHave;Mustnothave;mustnothave
	ComplianceType ComplianceType `json:"complianceType"`
	// MetadataComplianceType is how labels and annotations are compared (complianceType's when unset).
	// +optional
	// +kubebuilder:validation:Enum=MustHave;Musthave;musthave;MustOnlyHave;Mustonlyhave;mustonlyhave
	MetadataComplianceType ComplianceType `json:"metadataComplianceType,omitempty"`
	// +optional
	// +kubebuilder:default=None
	RecreateOption RecreateOption `json:"recreateOption,omitempty"`
	// ObjectDefinition is the object, or the fields of it that are checked.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	ObjectDefinition runtime.RawExtension `json:"objectDefinition"`
	// +optional
	RecordDiff RecordDiff `json:"recordDiff,omitempty"`
	// ObjectSelector chooses the objects of an unnamed template by their labels.
	// +optional
	ObjectSelector *metav1.LabelSelector `json:"objectSelector,omitempty"`
}

// ConfigComplianceState is a ConfigurationPolicy's compliance.
//
// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant;Terminating
type ConfigComplianceState string

// ConfigurationPolicyStatus is the last evaluation's result.
type ConfigurationPolicyStatus struct {
	// +optional
	ComplianceState ConfigComplianceState `json:"compliant,omitempty"`
	// CompliancyDetails holds one entry per object template, in order.
	// +optional
	CompliancyDetails []TemplateStatus `json:"compliancyDetails,omitempty"`
	// +optional
	LastEvaluated string `json:"lastEvaluated,omitempty"`
	// +optional
	LastEvaluatedGeneration int64 `json:"lastEvaluatedGeneration,omitempty"`
	// RelatedObjects are the objects the templates matched or miss.
	// +optional
	RelatedObjects []RelatedObject `json:"relatedObjects,omitempty"`
	// +optional
	History []HistoryEvent `json:"history,omitempty"`
}

// TemplateStatus is one object template's result.
type TemplateStatus struct {
	// +optional
	ComplianceState ConfigComplianceState `json:"Compliant,omitempty"` //nolint:tagliatelle // OCM's field name
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
	// +optional
	Validity Validity `json:"Validity,omitempty"` //nolint:tagliatelle // OCM's field name
}

// Condition is a template's violation or notification.
type Condition struct {
	// Type is violation (non-compliant) or notification (compliant).
	// +required
	Type string `json:"type"`
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// Validity is deprecated in OCM and unused.
type Validity struct {
	// +optional
	Valid *bool `json:"valid,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ObjectMetadata names an object.
type ObjectMetadata struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ObjectResource is an object's kind and name.
type ObjectResource struct {
	// +optional
	Metadata ObjectMetadata `json:"metadata,omitempty"`
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
}

// ObjectProperties are what the controller knows of a related object.
type ObjectProperties struct {
	// CreatedByPolicy is true for an object the policy created (enforce).
	// +optional
	CreatedByPolicy *bool `json:"createdByPolicy,omitempty"`
	// +optional
	UID string `json:"uid,omitempty"`
	// +optional
	Diff string `json:"diff,omitempty"`
	// +optional
	MatchesAfterDryRun bool `json:"matchesAfterDryRun,omitempty"`
}

// RelatedObject is an object a template matched or misses, with its compliance.
type RelatedObject struct {
	// +optional
	Properties *ObjectProperties `json:"properties,omitempty"`
	// +optional
	Object ObjectResource `json:"object,omitempty"`
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
}

// HistoryEvent is a past compliance message.
type HistoryEvent struct {
	// +optional
	LastTimestamp metav1.MicroTime `json:"lastTimestamp,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ConfigurationPolicyList is a list of ConfigurationPolicies.
//
// +kubebuilder:object:root=true
type ConfigurationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ConfigurationPolicy `json:"items"`
}
