package v1beta1

// Names of the built-in prioritizers (scoreCoordinate.builtIn). Each scores a cluster in
// [-100, 100]; a cluster's total is the sum of weight x score over the enabled prioritizers.
const (
	// PrioritizerBalance favors clusters holding fewer decisions of other placements.
	PrioritizerBalance = "Balance"
	// PrioritizerSteady favors clusters already in this placement's decisions, so that decisions
	// do not churn.
	PrioritizerSteady = "Steady"
	// PrioritizerResourceAllocatableCPU favors clusters with more allocatable CPU.
	PrioritizerResourceAllocatableCPU = "ResourceAllocatableCPU"
	// PrioritizerResourceAllocatableMemory favors clusters with more allocatable memory.
	PrioritizerResourceAllocatableMemory = "ResourceAllocatableMemory"
	// PrioritizerSpread favors clusters in topologies with fewer chosen clusters (spreadPolicy).
	PrioritizerSpread = "Spread"
)

// DefaultPrioritizerWeight is the weight of a configured prioritizer whose weight is not set, and
// of Balance and Steady in Additive mode when they are not configured.
const DefaultPrioritizerWeight int32 = 1

// PrioritizerPolicyMode says whether prioritizers that are not listed still count.
// The empty string means Additive.
//
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self in ['Additive', 'Exact']",message="mode must be Additive or Exact: Additive keeps the default prioritizers (Balance and Steady, weight 1) beside the listed ones, Exact uses only the listed ones"
type PrioritizerPolicyMode string

const (
	// PrioritizerPolicyModeAdditive adds the listed prioritizers to the defaults (Balance and
	// Steady with weight 1); a listed prioritizer overrides its default weight.
	PrioritizerPolicyModeAdditive PrioritizerPolicyMode = "Additive"
	// PrioritizerPolicyModeExact uses only the listed prioritizers; the rest weigh 0.
	PrioritizerPolicyModeExact PrioritizerPolicyMode = "Exact"
)

// PrioritizerPolicy says how qualifying clusters are ranked.
type PrioritizerPolicy struct {
	// Mode is Additive (default: the listed prioritizers plus the defaults) or Exact (only the
	// listed prioritizers). Exact keeps behavior stable when defaults change between releases.
	// +optional
	// +kubebuilder:default=Additive
	Mode PrioritizerPolicyMode `json:"mode,omitempty"`

	// Configurations are the prioritizers to use and their weights.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Configurations []PrioritizerConfig `json:"configurations,omitempty"`
}

// PrioritizerConfig is one prioritizer and its weight.
type PrioritizerConfig struct {
	// ScoreCoordinate says where the score comes from: a built-in prioritizer or an add-on's
	// AddOnPlacementScore.
	// +required
	ScoreCoordinate *ScoreCoordinate `json:"scoreCoordinate"`

	// Weight multiplies the prioritizer's score, from -10 to 10 (default 1). 0 disables the
	// prioritizer; a negative weight prefers the clusters it scores lowest.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=-10
	// +kubebuilder:validation:Maximum=10
	Weight *int32 `json:"weight,omitempty"`
}

// ScoreCoordinateType says whether a score comes from a built-in prioritizer or an add-on.
// +kubebuilder:validation:Enum=BuiltIn;AddOn
type ScoreCoordinateType string

const (
	// ScoreCoordinateTypeBuiltIn takes the score from the built-in prioritizer named in builtIn.
	ScoreCoordinateTypeBuiltIn ScoreCoordinateType = "BuiltIn"
	// ScoreCoordinateTypeAddOn takes the score from an AddOnPlacementScore named in addOn.
	ScoreCoordinateTypeAddOn ScoreCoordinateType = "AddOn"
)

// ScoreCoordinate locates the score a prioritizer uses.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'BuiltIn' || (has(self.builtIn) && size(self.builtIn) > 0)",fieldPath=".builtIn",reason=FieldValueRequired,message="scoreCoordinate type BuiltIn needs builtIn, the prioritizer name (Balance, Steady, ResourceAllocatableCPU or ResourceAllocatableMemory): set builtIn, or use type AddOn with addOn"
// +kubebuilder:validation:XValidation:rule="self.type != 'AddOn' || has(self.addOn)",fieldPath=".addOn",reason=FieldValueRequired,message="scoreCoordinate type AddOn needs addOn (the AddOnPlacementScore resourceName and scoreName): set addOn, or use type BuiltIn with builtIn"
type ScoreCoordinate struct {
	// Type is BuiltIn (default; set builtIn) or AddOn (set addOn).
	// +required
	// +kubebuilder:default=BuiltIn
	Type ScoreCoordinateType `json:"type,omitempty"`

	// BuiltIn names the built-in prioritizer when type is BuiltIn: Balance, Steady,
	// ResourceAllocatableCPU or ResourceAllocatableMemory. An unknown name is accepted but makes
	// the placement report PlacementMisconfigured=True.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	BuiltIn string `json:"builtIn,omitempty"`

	// AddOn names the add-on score when type is AddOn.
	// +optional
	AddOn *AddOnScore `json:"addOn,omitempty"`
}

// AddOnScore names one score of an AddOnPlacementScore. The AddOnPlacementScore of that name in
// each cluster's namespace gives the cluster's score; a missing or expired one scores 0.
type AddOnScore struct {
	// ResourceName is the name of the AddOnPlacementScore objects, for example
	// resource-usage-score.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ResourceName string `json:"resourceName"`

	// ScoreName is the score inside them, for example gpuClusterAvailable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ScoreName string `json:"scoreName"`
}
