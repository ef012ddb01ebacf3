package v1alpha1

// Per-manifest options of an AddOnTemplate's agent spec, in the wire shape of a ManifestWork's
// spec.manifestConfigs.

// ManifestConfigOption tunes how one manifest of the workload is updated and what of its status
// is reported back.
type ManifestConfigOption struct {
	// ResourceIdentifier picks the manifest; rules naming a resource the workload does not
	// create are ignored.
	// +required
	ResourceIdentifier ResourceIdentifier `json:"resourceIdentifier"`

	// FeedbackRules say which status fields of the resource are reported in the work's status;
	// none when empty.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	FeedbackRules []FeedbackRule `json:"feedbackRules,omitempty"`

	// FeedbackScrapeType is how the work agent follows the resource's status: Poll (default) or
	// Watch.
	// +optional
	// +kubebuilder:default=Poll
	FeedbackScrapeType FeedbackScrapeType `json:"feedbackScrapeType,omitempty"`

	// UpdateStrategy is how the resource is updated when the manifest changes; Update when unset.
	// +optional
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`

	// ConditionRules set work conditions (Complete among them) from the resource's state, one
	// rule per condition.
	// +optional
	// +listType=map
	// +listMapKey=condition
	// +kubebuilder:validation:MaxItems=16
	ConditionRules []ConditionRule `json:"conditionRules,omitempty"`
}

// ResourceIdentifier names a resource by group, resource, namespace and name.
type ResourceIdentifier struct {
	// Group is the resource's API group; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`

	// Resource is the plural resource name, such as deployments.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Resource string `json:"resource"`

	// Name of the resource.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the resource; empty for a cluster-scoped resource.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// FeedbackScrapeType is how the work agent follows a resource's status.
// +kubebuilder:validation:Enum=Poll;Watch
type FeedbackScrapeType string

const (
	// FeedbackScrapeTypePoll reads the status periodically.
	FeedbackScrapeTypePoll FeedbackScrapeType = "Poll"
	// FeedbackScrapeTypeWatch watches the resource and reports changes as they happen.
	FeedbackScrapeTypeWatch FeedbackScrapeType = "Watch"
)

// FeedBackType is how a feedback rule picks status fields.
// +kubebuilder:validation:Enum=WellKnownStatus;JSONPaths
type FeedBackType string

const (
	// WellKnownStatusType reports the fields a built-in rule knows for common kinds (for
	// example a Deployment's replicas and readyReplicas).
	WellKnownStatusType FeedBackType = "WellKnownStatus"
	// JSONPathsType reports the fields the rule's jsonPaths name.
	JSONPathsType FeedBackType = "JSONPaths"
)

// FeedbackRule picks status fields of a resource to report.
type FeedbackRule struct {
	// Type is WellKnownStatus or JSONPaths.
	// +required
	Type FeedBackType `json:"type"`

	// JSONPaths are the fields to report with type JSONPaths, one per name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	JSONPaths []FeedbackJSONPath `json:"jsonPaths,omitempty"`
}

// FeedbackJSONPath is one status field to report.
type FeedbackJSONPath struct {
	// Name is the alias the value is reported under.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Version is the resource version the path is read in; the newest served version when
	// empty.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Version string `json:"version,omitempty"`

	// Path is a JSONPath under .status to a single integer, string or boolean.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`
}

// UpdateStrategyType is how the work agent updates a resource.
// +kubebuilder:validation:Enum=Update;CreateOnly;ServerSideApply;ReadOnly
type UpdateStrategyType string

const (
	// UpdateStrategyTypeUpdate replaces the resource with the manifest (default).
	UpdateStrategyTypeUpdate UpdateStrategyType = "Update"
	// UpdateStrategyTypeCreateOnly creates the resource and never updates it.
	UpdateStrategyTypeCreateOnly UpdateStrategyType = "CreateOnly"
	// UpdateStrategyTypeServerSideApply applies the manifest with server-side apply.
	UpdateStrategyTypeServerSideApply UpdateStrategyType = "ServerSideApply"
	// UpdateStrategyTypeReadOnly only checks that the resource exists and reports feedback.
	UpdateStrategyTypeReadOnly UpdateStrategyType = "ReadOnly"
)

// UpdateStrategy is how the work agent updates a resource.
type UpdateStrategy struct {
	// Type is Update (default), CreateOnly, ServerSideApply or ReadOnly.
	// +required
	// +kubebuilder:default=Update
	Type UpdateStrategyType `json:"type"`

	// ServerSideApply configures the ServerSideApply type.
	// +optional
	ServerSideApply *ServerSideApplyConfig `json:"serverSideApply,omitempty"`
}

// ServerSideApplyConfig configures server-side apply of a manifest.
type ServerSideApplyConfig struct {
	// Force takes over fields other managers own instead of failing with a conflict.
	// +optional
	Force bool `json:"force,omitempty"`

	// FieldManager is the field manager name; work-agent (default) or a name starting with it.
	// +optional
	// +kubebuilder:default=work-agent
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^work-agent`
	FieldManager string `json:"fieldManager,omitempty"`

	// IgnoreFields are fields of the resource the work agent leaves alone, one entry per
	// condition.
	// +optional
	// +listType=map
	// +listMapKey=condition
	// +kubebuilder:validation:MaxItems=2
	IgnoreFields []IgnoreField `json:"ignoreFields,omitempty"`
}

// IgnoreFieldsCondition says when ignored fields are left alone.
// +kubebuilder:validation:Enum=OnSpokePresent;OnSpokeChange
type IgnoreFieldsCondition string

const (
	// IgnoreFieldsConditionOnSpokePresent leaves the fields alone once the resource exists on the
	// cluster.
	IgnoreFieldsConditionOnSpokePresent IgnoreFieldsCondition = "OnSpokePresent"
	// IgnoreFieldsConditionOnSpokeChange leaves the fields alone only after someone on the
	// cluster changed them.
	IgnoreFieldsConditionOnSpokeChange IgnoreFieldsCondition = "OnSpokeChange"
)

// IgnoreField lists fields server-side apply does not overwrite under a condition.
type IgnoreField struct {
	// Condition is when the fields are ignored: OnSpokePresent (default) or OnSpokeChange.
	// +required
	// +kubebuilder:default=OnSpokePresent
	Condition IgnoreFieldsCondition `json:"condition"`

	// JSONPaths are the fields, as Kubernetes JSONPath expressions.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	JSONPaths []string `json:"jsonPaths,omitempty"`

	// JQPathExpressions are the fields, as jq path expressions (they can filter list items).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`

	// JSONPointers are the fields, as RFC 6901 JSON pointers such as /spec/replicas.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	JSONPointers []string `json:"jsonPointers,omitempty"`
}

// ConditionRuleType is how a condition rule is evaluated.
// +kubebuilder:validation:Enum=WellKnownConditions;CEL
type ConditionRuleType string

const (
	// WellKnownConditionsType uses built-in rules for common kinds (a Job is Complete when it
	// succeeded, for example).
	WellKnownConditionsType ConditionRuleType = "WellKnownConditions"
	// CELConditionExpressionsType evaluates the rule's celExpressions.
	CELConditionExpressionsType ConditionRuleType = "CEL"
)

// ConditionRule sets a work condition from a resource's state.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'CEL' || size(self.condition) > 0",message="conditionRules[].condition is required for type CEL: name the condition the celExpressions set"
type ConditionRule struct {
	// Condition is the condition type to set, for example Complete (a Complete manifest is no
	// longer updated).
	// +required
	// +kubebuilder:validation:MaxLength=316
	Condition string `json:"condition"`

	// Type is WellKnownConditions or CEL.
	// +required
	Type ConditionRuleType `json:"type"`

	// CELExpressions are CEL expressions over the resource (variable object); the condition is
	// True when all of them are.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=4096
	CELExpressions []string `json:"celExpressions,omitempty"`

	// Message is the condition's message.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`

	// MessageExpression is a CEL expression (variables object and result) whose non-empty
	// string result replaces Message.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	MessageExpression string `json:"messageExpression,omitempty"`
}
