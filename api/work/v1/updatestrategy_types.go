package v1

// UpdateStrategyType is how the agent treats an object that already exists on the managed
// cluster.
// +kubebuilder:validation:Enum=Update;CreateOnly;ServerSideApply;ReadOnly
type UpdateStrategyType string

const (
	// UpdateStrategyTypeUpdate replaces the object with the manifest by an update call. It is the
	// default.
	UpdateStrategyTypeUpdate UpdateStrategyType = "Update"
	// UpdateStrategyTypeCreateOnly creates the object when it is missing and never changes it
	// afterwards.
	UpdateStrategyTypeCreateOnly UpdateStrategyType = "CreateOnly"
	// UpdateStrategyTypeServerSideApply applies the manifest with server-side apply; a conflict
	// with another field manager sets the manifest's Applied condition False with reason
	// ApplyConflict unless serverSideApply.force is set.
	UpdateStrategyTypeServerSideApply UpdateStrategyType = "ServerSideApply"
	// UpdateStrategyTypeReadOnly never writes the object: the agent only checks that it exists
	// (by the manifest's metadata) and still reports status feedback.
	UpdateStrategyTypeReadOnly UpdateStrategyType = "ReadOnly"
)

// UpdateStrategy says how the agent updates one object of the workload.
//
// +kubebuilder:validation:XValidation:rule="!has(self.serverSideApply) || self.type == 'ServerSideApply'",message="updateStrategy.serverSideApply is only used with type ServerSideApply: set type ServerSideApply, or remove serverSideApply"
type UpdateStrategy struct {
	// Type is Update (default), CreateOnly, ServerSideApply or ReadOnly.
	// +required
	// +kubebuilder:default=Update
	Type UpdateStrategyType `json:"type"`

	// ServerSideApply configures server-side apply; only with type ServerSideApply.
	// +optional
	ServerSideApply *ServerSideApplyConfig `json:"serverSideApply,omitempty"`
}

// ServerSideApplyConfig configures how the agent applies an object with server-side apply.
type ServerSideApplyConfig struct {
	// Force takes over fields other field managers own instead of failing with a conflict.
	// +optional
	Force bool `json:"force,omitempty"`

	// FieldManager is the field manager the agent applies as: work-agent (default), or a name
	// starting with work-agent.
	// +optional
	// +kubebuilder:default=work-agent
	// +kubebuilder:validation:Pattern=`^work-agent`
	// +kubebuilder:validation:MaxLength=128
	FieldManager string `json:"fieldManager,omitempty"`

	// IgnoreFields are fields of the object the agent leaves alone when applying, for example
	// replicas that an autoscaler on the spoke manages. At most one entry per condition.
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
	// IgnoreFieldsConditionOnSpokePresent ignores the fields whenever the object exists on the
	// spoke: the manifest's values are used only when creating it. It is the default.
	IgnoreFieldsConditionOnSpokePresent IgnoreFieldsCondition = "OnSpokePresent"
	// IgnoreFieldsConditionOnSpokeChange ignores the fields only after they were changed on the
	// spoke; until then the manifest's values are applied.
	IgnoreFieldsConditionOnSpokeChange IgnoreFieldsCondition = "OnSpokeChange"
)

// IgnoreField lists fields of an object that server-side apply leaves alone under a condition.
// The fields may be given as JSONPaths, JSON Pointers or jq path expressions, or a mix.
type IgnoreField struct {
	// Condition is when the fields are ignored: OnSpokePresent (default) or OnSpokeChange.
	// +required
	// +kubebuilder:default=OnSpokePresent
	Condition IgnoreFieldsCondition `json:"condition"`

	// JSONPaths are Kubernetes JSONPath expressions of the fields, for example .spec.replicas.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=1024
	JSONPaths []string `json:"jsonPaths,omitempty"`

	// JSONPointers are RFC 6901 JSON Pointers to the fields, for example /spec/replicas ('~' is
	// written ~0 and '/' inside a key ~1).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=1024
	JSONPointers []string `json:"jsonPointers,omitempty"`

	// JQPathExpressions are jq path expressions selecting the fields, which may filter lists,
	// for example .spec.template.spec.containers[] | select(.name == "trainer") | .resources.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=1024
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}
