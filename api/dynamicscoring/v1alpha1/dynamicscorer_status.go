package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DynamicScorerStatus is the scorer's health and the configuration the agent last synced.
type DynamicScorerStatus struct {
	// HealthStatus is Active, Inactive or Unknown.
	// +required
	HealthStatus ScorerHealthStatus `json:"healthStatus"`

	// LastSyncedConfig is the configuration the agent last synced successfully.
	// +optional
	LastSyncedConfig *SyncedConfig `json:"lastSyncedConfig,omitempty"`

	// Conditions are Flotilla's, not OCM contrib's: Accepted says whether the hub runs the
	// scorer at all (it accepts DynamicScorers only in the namespace its administrator names).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionAccepted is the condition type that says whether the hub runs the scorer.
const ConditionAccepted = "Accepted"

// ScorerHealthStatus is the health of a scorer.
// +kubebuilder:validation:Enum=Active;Inactive;Unknown
type ScorerHealthStatus string

const (
	// ScorerHealthActive is a scorer that answers its health check.
	ScorerHealthActive ScorerHealthStatus = "Active"
	// ScorerHealthInactive is a scorer that fails its health check.
	ScorerHealthInactive ScorerHealthStatus = "Inactive"
	// ScorerHealthUnknown is a scorer whose health has not been checked yet.
	ScorerHealthUnknown ScorerHealthStatus = "Unknown"
)

// SyncedConfig is a scorer configuration as the agent synced it.
type SyncedConfig struct {
	// Name of the scorer.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Description of the scorer.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description"`

	// Source is the metrics source in effect.
	// +required
	Source SyncedSource `json:"source"`

	// Scoring is the scoring API in effect.
	// +required
	Scoring SyncedScoring `json:"scoring"`
}

// SyncedSource is the metrics source in effect; for type Prometheus, Host is the Prometheus URL.
type SyncedSource struct {
	// Type is the kind of source as the scorer reported it (Prometheus or None).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Type string `json:"type,omitempty"`

	// Host is the source's base URL, for example http://prometheus.monitoring.svc:9090.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Host string `json:"host,omitempty"`

	// Path is the query API's path, for example /api/v1/query_range.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`

	// Params is the query in effect.
	// +required
	Params SyncedSourceParams `json:"params"`
}

// SyncedScoring is the scoring API in effect.
type SyncedScoring struct {
	// Host is the scoring API's base URL, for example http://scorer.scoring.svc:8080.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Host string `json:"host,omitempty"`

	// Path is the scoring API's path, for example /api/v1/score.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`

	// Params is the score name and interval in effect.
	// +required
	Params SyncedScoringParams `json:"params"`
}

// SyncedSourceParams is the Prometheus range query in effect. Unlike spec.source.params it is not
// range-checked, so the agent can always report what it runs.
type SyncedSourceParams struct {
	// Query is the PromQL query; several queries are separated with semicolons.
	// +required
	// +kubebuilder:validation:MaxLength=16384
	Query string `json:"query"`

	// Range is how far back the query reaches, in seconds.
	// +required
	Range int64 `json:"range"`

	// Step is the query's resolution step, in seconds.
	// +required
	Step int64 `json:"step"`
}

// SyncedScoringParams is the score name and interval in effect. Unlike spec.scoring.params it is
// not range-checked, so the agent can always report what it runs.
type SyncedScoringParams struct {
	// Name of the score.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Interval is how often, in seconds, scores are computed and the configuration synced.
	// +required
	Interval int64 `json:"interval"`
}
