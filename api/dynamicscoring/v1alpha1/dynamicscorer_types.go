package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DefaultScoringPath is the path of the scoring API the agent calls when spec.scoring.path is
// empty.
const DefaultScoringPath = "/score"

// DynamicScorer describes a scoring service: where the Dynamic Scoring Agent on each cluster reads
// metrics (source), which service turns them into scores (scoring), and where the scores go
// (scoreDestination, normally AddOnPlacementScores that Placements rank clusters by). The agent
// reports the configuration it last synced, and the scorer's health, in status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type DynamicScorer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the scorer and how the agent uses it.
	// +optional
	Spec DynamicScorerSpec `json:"spec,omitempty"`

	// Status is the scorer's health and the configuration the agent last synced.
	// +optional
	Status DynamicScorerStatus `json:"status,omitempty"`
}

// DynamicScorerSpec describes a scorer and how the Dynamic Scoring Agent uses it.
//
// +kubebuilder:validation:XValidation:rule="self.configSyncMode != 'Full' || size(self.configURL) > 0",fieldPath=".configURL",message="configSyncMode Full needs spec.configURL: set the URL the agent fetches its configuration from, or set configSyncMode to None"
type DynamicScorerSpec struct {
	// Description says briefly what the scorer scores.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description"`

	// ConfigURL is the URL the agent fetches the scorer's configuration from when ConfigSyncMode
	// is Full.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	ConfigURL string `json:"configURL"`

	// ConfigSyncMode is Full (the agent fetches the whole configuration from ConfigURL) or None
	// (the agent uses this spec as written).
	// +required
	ConfigSyncMode ConfigSyncMode `json:"configSyncMode"`

	// Location says whether the scorer runs inside the cluster (Internal) or outside it
	// (External).
	// +optional
	Location Location `json:"location,omitempty"`

	// Source is where the agent reads the metrics it sends to the scorer.
	// +optional
	Source *SourceSpec `json:"source,omitempty"`

	// Scoring is the scoring API the agent calls to turn metrics into scores.
	// +optional
	Scoring *ScoringSpec `json:"scoring,omitempty"`

	// ScoreDestination is where the agent writes the scores: AddOnPlacementScore (the
	// AddOnPlacementScore API, which Placements read) or None.
	// +optional
	ScoreDestination ScoreDestination `json:"scoreDestination,omitempty"`

	// ScoreDimensionFormat builds the name each score is stored under (the AddOnPlacementScore
	// score name) from placeholders such as ${cluster}, ${node}, ${device}, ${namespace}, ${app},
	// ${pod}, ${container}, ${meta} and ${scoreName}; for example
	// "resource-usage-${cluster}-${namespace}-${app}".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ScoreDimensionFormat string `json:"scoreDimensionFormat,omitempty"`
}

// ConfigSyncMode says how the agent gets a scorer's configuration.
// +kubebuilder:validation:Enum=Full;None
type ConfigSyncMode string

const (
	// ConfigSyncModeFull makes the agent fetch the whole configuration from spec.configURL.
	ConfigSyncModeFull ConfigSyncMode = "Full"
	// ConfigSyncModeNone makes the agent use the spec as written, fetching nothing.
	ConfigSyncModeNone ConfigSyncMode = "None"
)

// Location says where a scorer runs relative to the cluster.
// +kubebuilder:validation:Enum=Internal;External
type Location string

const (
	// LocationInternal is a scorer running inside the cluster.
	LocationInternal Location = "Internal"
	// LocationExternal is a scorer running outside the cluster.
	LocationExternal Location = "External"
)

// SourceType is the kind of metrics source.
// +kubebuilder:validation:Enum=Prometheus;None
type SourceType string

const (
	// SourceTypePrometheus reads metrics with a Prometheus range query.
	SourceTypePrometheus SourceType = "Prometheus"
	// SourceTypeNone reads no metrics: the scorer works without input data.
	SourceTypeNone SourceType = "None"
)

// ScoreDestination is where computed scores are written.
// +kubebuilder:validation:Enum=AddOnPlacementScore;None
type ScoreDestination string

const (
	// ScoreDestinationAddOnPlacementScore writes scores into the cluster's AddOnPlacementScore.
	ScoreDestinationAddOnPlacementScore ScoreDestination = "AddOnPlacementScore"
	// ScoreDestinationNone writes scores nowhere.
	ScoreDestinationNone ScoreDestination = "None"
)

// SourceSpec is where the agent reads metrics. Host, Path, Params and Auth are ignored when Type
// is None.
//
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'Prometheus' || (has(self.host) && size(self.host) > 0 && has(self.params) && size(self.params.query) > 0)",message="source.type Prometheus needs spec.source.host and spec.source.params.query: set both, or set spec.source.type to None"
type SourceSpec struct {
	// Type is the kind of source: Prometheus or None.
	// +optional
	Type SourceType `json:"type,omitempty"`

	// Host is the source's base URL, for example https://prometheus.example.com for queries to
	// https://prometheus.example.com/api/v1/query_range.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Host string `json:"host,omitempty"`

	// Path is the query API's path on Host, for example /api/v1/query_range.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path,omitempty"`

	// Params is the query to run.
	// +optional
	Params *SourceParams `json:"params,omitempty"`

	// Auth is how the agent authenticates to the source; none when empty.
	// +optional
	Auth *Auth `json:"auth,omitempty"`
}

// SourceParams is a Prometheus range query.
type SourceParams struct {
	// Query is the PromQL query; separate several queries with semicolons.
	// +required
	// +kubebuilder:validation:MaxLength=16384
	Query string `json:"query"`

	// Range is how far back the query reaches, in seconds.
	// +required
	// +kubebuilder:validation:Minimum=1
	Range int64 `json:"range"`

	// Step is the query's resolution step, in seconds.
	// +required
	// +kubebuilder:validation:Minimum=1
	Step int64 `json:"step"`
}

// ScoringSpec is the scoring API the agent calls.
type ScoringSpec struct {
	// Host is the scoring API's base URL, for example https://scorer.example.com for calls to
	// https://scorer.example.com/score.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Host string `json:"host,omitempty"`

	// Path is the scoring API's path on Host; DefaultScoringPath (/score) when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path,omitempty"`

	// Params name the score and say how often to compute it.
	// +optional
	Params *ScoringParams `json:"params,omitempty"`

	// Auth is how the agent authenticates to the scoring API; none when empty.
	// +optional
	Auth *Auth `json:"auth,omitempty"`
}

// ScoringParams name a score and set how often it is computed.
type ScoringParams struct {
	// Name of the score.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Interval is how often, in seconds, the agent computes scores and syncs the configuration.
	// +required
	// +kubebuilder:validation:Minimum=1
	Interval int64 `json:"interval"`
}

// Auth is how the agent authenticates: with a bearer token kept in a Secret.
type Auth struct {
	// TokenSecretRef is the Secret key holding the token.
	// +required
	TokenSecretRef SecretKeyReference `json:"tokenSecretRef"`
}

// SecretKeyReference names one key of a Secret.
type SecretKeyReference struct {
	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key within the Secret whose value is the token.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// DynamicScorerList is a list of DynamicScorers.
//
// +kubebuilder:object:root=true
type DynamicScorerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DynamicScorer `json:"items"`
}
