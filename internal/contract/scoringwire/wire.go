package scoringwire

import (
	"encoding/json"
	"fmt"

	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// Name is the add-on's name.
var Name = builtinaddon.DynamicScoring.Name

// DefaultDimensionFormat is the score name when scoreDimensionFormat is empty, as OCM contrib's.
const DefaultDimensionFormat = "${scoreName}"

// ConfigMapName is the ConfigMap the hub writes in each cluster's namespace (and OCM contrib's
// hub in the agent's namespace): the scorers the cluster's agent runs.
const ConfigMapName = "dynamic-scoring-config"

// SummariesKey is the ConfigMap's key holding the JSON list of Summary.
const SummariesKey = "summaries"

// MaxSeconds bounds a scorer's interval, range and step, in seconds (one year). The agent turns
// them into time.Durations, which wrap around past about 292 years (ValidIntervals intervals
// sooner): a wrapped interval makes a ticker panic and a validUntil lie in the past.
const MaxSeconds = 365 * 24 * 60 * 60

// Summary is one active scorer as the agent runs it: OCM contrib's ScorerSummary, with the
// DynamicScorer's namespace added so that conditions can name it. The hub resolves the spec and
// the configuration the scorer serves (configSyncMode Full) into full endpoints.
type Summary struct {
	// Namespace and Name are the DynamicScorer's.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// ScoreName is scoring.params.name; the AddOnPlacementScore is named after it.
	ScoreName               string `json:"scoreName"`
	SourceType              string `json:"sourceType"`
	SourceEndpoint          string `json:"sourceEndpoint"`
	SourceEndpointAuthName  string `json:"sourceEndpointAuthName"`
	SourceEndpointAuthKey   string `json:"sourceEndpointAuthKey"`
	SourceQuery             string `json:"sourceQuery"`
	SourceRange             int64  `json:"sourceRange"`
	SourceStep              int64  `json:"sourceStep"`
	ScoringEndpoint         string `json:"scoringEndpoint"`
	ScoringInterval         int64  `json:"scoringInterval"`
	ScoringEndpointAuthName string `json:"scoringEndpointAuthName"`
	ScoringEndpointAuthKey  string `json:"scoringEndpointAuthKey"`
	Location                string `json:"location"`
	ScoreDestination        string `json:"scoreDestination"`
	ScoreDimensionFormat    string `json:"scoreDimensionFormat"`
	// FromConfig says the source and scoring came from the scorer's /config (configSyncMode
	// Full), not from the spec: messages then point there.
	FromConfig bool `json:"fromConfig,omitempty"`
}

// ScorerRef names the DynamicScorer in messages.
func (s Summary) ScorerRef() string {
	if s.Namespace == "" {
		return "DynamicScorer " + s.Name
	}
	return "DynamicScorer " + s.Namespace + "/" + s.Name
}

// Field names a spec field (path below spec) in messages, and where it comes from with
// configSyncMode Full.
func (s Summary) Field(path string) string {
	if s.FromConfig {
		return fmt.Sprintf("%s (as served by the scorer's /config, configSyncMode Full)", path)
	}
	return "spec." + path
}

// EncodeSummaries is the ConfigMap's data for summaries.
func EncodeSummaries(ss []Summary) (string, error) {
	if ss == nil {
		ss = []Summary{}
	}
	b, err := json.Marshal(ss)
	return string(b), err
}

// DecodeSummaries reads the ConfigMap's data.
func DecodeSummaries(data map[string]string) ([]Summary, error) {
	raw, ok := data[SummariesKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no key %q", ConfigMapName, SummariesKey)
	}
	var ss []Summary
	if err := json.Unmarshal([]byte(raw), &ss); err != nil {
		return nil, fmt.Errorf("ConfigMap %s key %q: %w", ConfigMapName, SummariesKey, err)
	}
	return ss, nil
}
