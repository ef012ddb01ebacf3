package v1beta1

// TaintEffect is what a ManagedCluster taint does to placements that do not tolerate it.
// +kubebuilder:validation:Enum=NoSelect;PreferNoSelect;NoSelectIfNew
type TaintEffect string

const (
	// TaintEffectNoSelect keeps the cluster out of placements that do not tolerate the taint, and
	// removes it from their decisions.
	TaintEffectNoSelect TaintEffect = "NoSelect"
	// TaintEffectPreferNoSelect never filters a cluster; it only marks it as less wanted.
	TaintEffectPreferNoSelect TaintEffect = "PreferNoSelect"
	// TaintEffectNoSelectIfNew keeps the cluster out of placements that do not tolerate the taint
	// and have not already chosen it; existing decisions stay.
	TaintEffectNoSelectIfNew TaintEffect = "NoSelectIfNew"
)

// Taints the hub sets on ManagedClusters by itself; placements that want such clusters anyway
// tolerate them.
const (
	// TaintClusterUnreachable is set while the cluster's Available condition is Unknown or missing
	// (its agent stopped renewing its lease), with effect NoSelect.
	TaintClusterUnreachable = "cluster.open-cluster-management.io/unreachable"
	// TaintClusterUnavailable is set while the cluster's Available condition is False, with effect
	// NoSelect.
	TaintClusterUnavailable = "cluster.open-cluster-management.io/unavailable"
)

// TolerationOperator says how a toleration's value is compared with a taint's.
//
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:XValidation:rule="self in ['Equal', 'Exists']",message="operator must be Equal (the taint's value equals value) or Exists (any value of the key)"
type TolerationOperator string

const (
	// TolerationOpEqual tolerates taints with the same key and value.
	TolerationOpEqual TolerationOperator = "Equal"
	// TolerationOpExists tolerates taints with the same key, whatever their value; with an empty
	// key, every taint.
	TolerationOpExists TolerationOperator = "Exists"
)

// Toleration lets a placement choose clusters carrying a matching taint: one with the same key
// (any key when empty), value (per operator) and effect (any effect when empty).
//
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",fieldPath=".operator",message="a toleration with an empty key matches every taint and needs operator Exists: set key, or set operator to Exists"
// +kubebuilder:validation:XValidation:rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",fieldPath=".value",message="value must be empty when operator is Exists (Exists matches any value): remove value, or use operator Equal"
type Toleration struct {
	// Key is the taint key to tolerate; empty matches every key and needs operator Exists.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Key string `json:"key,omitempty"`

	// Operator is Equal (default: the taint's value must equal value) or Exists (any value).
	// +optional
	// +kubebuilder:default=Equal
	Operator TolerationOperator `json:"operator,omitempty"`

	// Value is the taint value to tolerate with operator Equal; empty with operator Exists.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`

	// Effect is the taint effect to tolerate: NoSelect, PreferNoSelect or NoSelectIfNew; empty
	// matches every effect.
	// +optional
	Effect TaintEffect `json:"effect,omitempty"`

	// TolerationSeconds limits how long a NoSelect or PreferNoSelect taint is tolerated, counted
	// from the taint's timeAdded (not from when the cluster was chosen); when it runs out the
	// cluster is filtered again. Unset tolerates the taint for ever. Ignored for other effects.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// SpreadPolicy spreads a placement's clusters over topologies.
type SpreadPolicy struct {
	// SpreadConstraints are applied in order, the first most important; at most 8.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	SpreadConstraints []SpreadConstraintsTerm `json:"spreadConstraints,omitempty"`
}

// TopologyKeyType says where a topology key is read from.
// +kubebuilder:validation:Enum=Label;Claim
type TopologyKeyType string

const (
	// TopologyKeyTypeLabel reads the topology from a ManagedCluster label.
	TopologyKeyTypeLabel TopologyKeyType = "Label"
	// TopologyKeyTypeClaim reads the topology from a cluster claim.
	TopologyKeyTypeClaim TopologyKeyType = "Claim"
)

// UnsatisfiableMaxSkewAction is what the scheduler does when a spread constraint cannot be met.
// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
type UnsatisfiableMaxSkewAction string

const (
	// DoNotSchedule stops choosing clusters that would break maxSkew.
	DoNotSchedule UnsatisfiableMaxSkewAction = "DoNotSchedule"
	// ScheduleAnyway keeps choosing clusters, preferring those that reduce the skew.
	ScheduleAnyway UnsatisfiableMaxSkewAction = "ScheduleAnyway"
)

// SpreadConstraintsTerm is one rule for spreading clusters over the values of a topology key.
type SpreadConstraintsTerm struct {
	// TopologyKey is the label key or claim name whose values are the topologies, for example
	// topology.kubernetes.io/region.
	// +required
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	TopologyKey string `json:"topologyKey"`

	// TopologyKeyType says whether TopologyKey is a Label or a Claim.
	// +required
	TopologyKeyType TopologyKeyType `json:"topologyKeyType"`

	// MaxSkew is the largest allowed difference between the number of chosen clusters in any
	// topology and in the topology with fewest; at least 1 (default 1).
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MaxSkew int32 `json:"maxSkew,omitempty"`

	// WhenUnsatisfiable is DoNotSchedule or ScheduleAnyway (default).
	// +optional
	// +kubebuilder:default=ScheduleAnyway
	WhenUnsatisfiable UnsatisfiableMaxSkewAction `json:"whenUnsatisfiable,omitempty"`
}
