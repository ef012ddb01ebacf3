package dynamicscoring

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

// Series is one series of a Prometheus matrix: its labels and [unix time, "value"] pairs.
type Series struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// ScoringRequest is what the agent POSTs to the scoring API.
type ScoringRequest struct {
	Data []Series `json:"data"`
}

// ScoringResponse is what the scoring API answers.
type ScoringResponse struct {
	Results []ScoringResult `json:"results"`
}

// ScoringResult is one score of the scoring API's answer.
type ScoringResult struct {
	Metric map[string]string `json:"metric"`
	Score  *float64          `json:"score"`
}

// ResponseError is a scoring API answer that cannot be used; Reason is the condition's reason.
type ResponseError struct {
	Reason, Message string
}

func (e *ResponseError) Error() string { return e.Message }

// Reasons of the Scored condition.
const (
	ReasonScored             = "Scored"
	ReasonSourceUnreachable  = "SourceUnreachable"
	ReasonSourceQueryFailed  = "SourceQueryFailed"
	ReasonScorerUnreachable  = "ScorerUnreachable"
	ReasonScorerTimeout      = "ScorerTimeout"
	ReasonScorerFailed       = "ScorerFailed"
	ReasonScorerMalformed    = "ScorerResponseMalformed"
	ReasonScoreOutOfRange    = "ScoreOutOfRange"
	ReasonAuthSecretMissing  = "AuthSecretMissing"
	ReasonScoreNameCollision = "ScoreNameNotOwned"
)

// ParseScores reads a scoring API's answer into the AddOnPlacementScore's scores, named by
// FormatDimension and sorted by name. Scores are rounded to whole numbers and must lie within
// -100..100; a missing or non-numeric score, an empty name or two results of one name make the
// whole answer unusable, so that no half-scored set is written.
func ParseScores(body []byte, format, cluster, scoreName string) ([]clusterv1alpha1.AddOnPlacementScoreItem, error) {
	var resp struct {
		Results *[]ScoringResult `json:"results"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &ResponseError{ReasonScorerMalformed, fmt.Sprintf("the answer is not the JSON {\"results\":[{\"metric\":{...},\"score\":N}]}: %v", err)}
	}
	if resp.Results == nil {
		return nil, &ResponseError{ReasonScorerMalformed, "the answer has no \"results\" list: it must be {\"results\":[{\"metric\":{...},\"score\":N}]}"}
	}
	seen := map[string]bool{}
	out := make([]clusterv1alpha1.AddOnPlacementScoreItem, 0, len(*resp.Results))
	for i, r := range *resp.Results {
		if r.Score == nil {
			return nil, &ResponseError{ReasonScorerMalformed, fmt.Sprintf("results[%d] has no numeric \"score\"", i)}
		}
		v := math.Round(*r.Score)
		if math.IsNaN(*r.Score) || v < clusterv1alpha1.MinScore || v > clusterv1alpha1.MaxScore {
			return nil, &ResponseError{ReasonScoreOutOfRange, fmt.Sprintf("results[%d] (metric %v) has score %v, outside %d..%d: the scorer must answer scores within that range",
				i, r.Metric, *r.Score, clusterv1alpha1.MinScore, clusterv1alpha1.MaxScore)}
		}
		name := FormatDimension(format, cluster, scoreName, r.Metric)
		switch {
		case name == "":
			return nil, &ResponseError{ReasonScorerMalformed, fmt.Sprintf("results[%d] (metric %v) gives an empty score name with scoreDimensionFormat %q", i, r.Metric, format)}
		case len(name) > 512:
			return nil, &ResponseError{ReasonScorerMalformed, fmt.Sprintf("results[%d] gives a score name longer than 512 characters with scoreDimensionFormat %q", i, format)}
		case seen[name]:
			return nil, &ResponseError{ReasonScorerMalformed, fmt.Sprintf("two results give the score name %q: scoreDimensionFormat %q must tell the results apart (add placeholders such as ${node})", name, format)}
		}
		seen[name] = true
		out = append(out, clusterv1alpha1.AddOnPlacementScoreItem{Name: name, Value: int32(v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
