package v1

// ManifestConfigOption tunes one object of the workload.
type ManifestConfigOption struct {
	// ResourceIdentifier names the object this entry applies to. An entry naming an object that
	// is not in the workload has no effect.
	// +required
	ResourceIdentifier ResourceIdentifier `json:"resourceIdentifier"`

	// FeedbackRules say which status fields of the object the agent copies into
	// status.resourceStatus.manifests[].statusFeedback. None means no feedback.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	FeedbackRules []FeedbackRule `json:"feedbackRules,omitempty"`

	// FeedbackScrapeType is how the agent notices status changes for feedback: Poll (default,
	// every status resync) or Watch (as they happen).
	// +optional
	// +kubebuilder:default=Poll
	FeedbackScrapeType FeedbackScrapeType `json:"feedbackScrapeType,omitempty"`

	// UpdateStrategy says how the agent updates the object when it already exists. Unset means
	// Update.
	// +optional
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`

	// ConditionRules derive ManifestWork conditions from the object's state, for example Complete
	// when a Job has finished. At most one rule per condition.
	// +optional
	// +listType=map
	// +listMapKey=condition
	// +kubebuilder:validation:MaxItems=20
	ConditionRules []ConditionRule `json:"conditionRules,omitempty"`
}

// ResourceIdentifier names one object on the managed cluster by group, resource, name and
// namespace.
type ResourceIdentifier struct {
	// Group is the object's API group; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`

	// Resource is the object's resource (plural, lower case), for example jobs.
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

// FeedbackScrapeType is how the agent watches an object for status feedback.
// +kubebuilder:validation:Enum=Poll;Watch
type FeedbackScrapeType string

const (
	// FeedbackPollType reads the object's status at every status resync.
	FeedbackPollType FeedbackScrapeType = "Poll"
	// FeedbackWatchType watches the object and reports status changes as they happen.
	FeedbackWatchType FeedbackScrapeType = "Watch"
)

// FeedBackType is which status fields a feedback rule returns.
// +kubebuilder:validation:Enum=WellKnownStatus;JSONPaths
type FeedBackType string

const (
	// WellKnownStatusType returns the commonly useful status fields of well-known kinds (those of
	// k8s.io/api and the OCM APIs), for example a Deployment's readyReplicas or a Job's succeeded.
	WellKnownStatusType FeedBackType = "WellKnownStatus"
	// JSONPathsType returns the status fields named in jsonPaths.
	JSONPathsType FeedBackType = "JSONPaths"
)

// FeedbackRule says which status fields of an object to report back to the hub.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'JSONPaths' || (has(self.jsonPaths) && size(self.jsonPaths) > 0)",message="feedbackRules of type JSONPaths need jsonPaths: list the status fields to return, or use type WellKnownStatus"
type FeedbackRule struct {
	// Type is WellKnownStatus (the usual fields of well-known kinds) or JSONPaths (the fields
	// listed in jsonPaths).
	// +required
	Type FeedBackType `json:"type"`

	// JSONPaths are the status fields to return with type JSONPaths, each under a name of its
	// own.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=50
	JSONPaths []JSONPath `json:"jsonPaths,omitempty"`
}

// JSONPath is one status field to report back, and the name to report it under.
type JSONPath struct {
	// Name is the name the value is reported under in statusFeedback.values.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Version is the API version to read the object at; unset means the newest version served.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Version string `json:"version,omitempty"`

	// Path is a kubectl-style JSONPath relative to the object's status, for example .succeeded.
	// It should lead to a single integer, string or boolean. A missing field reports nothing; a
	// list or object sets the manifest's StatusFeedbackSynced condition False (or, where the
	// agent reports raw JSON, is returned as JsonRaw of at most 1 KiB).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`
}

// ConditionRuleType is how a condition rule decides a condition.
// +kubebuilder:validation:Enum=WellKnownConditions;CEL
type ConditionRuleType string

const (
	// WellKnownConditionsType uses built-in rules for well-known kinds, for example a Job is
	// Complete when it has succeeded.
	WellKnownConditionsType ConditionRuleType = "WellKnownConditions"
	// CELConditionExpressionsType evaluates the rule's celExpressions against the object.
	CELConditionExpressionsType ConditionRuleType = "CEL"
)

// ConditionRule sets a condition on the manifest (and, for Complete, on the ManifestWork) from the
// state of the applied object.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'CEL' || size(self.condition) > 0",message="conditionRules of type CEL need a condition: name the condition the rule sets, for example Complete"
// +kubebuilder:validation:XValidation:rule="self.type != 'CEL' || (has(self.celExpressions) && size(self.celExpressions) > 0)",message="conditionRules of type CEL need celExpressions: give at least one expression over object, or use type WellKnownConditions"
type ConditionRule struct {
	// Condition is the type of condition the rule sets. Any name may be used; Complete is special:
	// a completed object is no longer updated, and when every object with a Complete rule is
	// complete the ManifestWork is Complete too (see deleteOption.ttlSecondsAfterFinished).
	// +required
	// +kubebuilder:validation:MaxLength=316
	Condition string `json:"condition"`

	// Type is WellKnownConditions (built-in rules for well-known kinds) or CEL (celExpressions).
	// +required
	Type ConditionRuleType `json:"type"`

	// CelExpressions are CEL expressions over the variable object (the applied object as the
	// agent last read it); the condition is True when all of them are true. Used with type CEL.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=4096
	CelExpressions []string `json:"celExpressions,omitempty"`

	// Message is the message of the condition the rule sets.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`

	// MessageExpression is a CEL expression producing the condition's message, over the
	// variables object (the applied object) and result (the rule's boolean outcome). A non-empty
	// result replaces message.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	MessageExpression string `json:"messageExpression,omitempty"`
}
