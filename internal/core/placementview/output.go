package placementview

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// Output is the JSON form of one placement's scheduling result. Its fields are a documented
// interface (docs/placement.md): every key is always present, lists are never null.
type Output struct {
	Placement  PlacementRef       `json:"placement"`
	Decisions  []DecisionOutput   `json:"decisions"`
	Clusters   []ClusterOutput    `json:"clusters"`
	Conditions []metav1.Condition `json:"conditions"`
}

// PlacementRef names the placement.
type PlacementRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// DecisionOutput is one selected cluster.
type DecisionOutput struct {
	ClusterName        string `json:"clusterName"`
	Score              int64  `json:"score"`
	Reason             string `json:"reason"`
	DecisionGroupIndex int32  `json:"decisionGroupIndex"`
	DecisionGroupName  string `json:"decisionGroupName"`
}

// ClusterOutput explains one member of the eligible sets.
type ClusterOutput struct {
	Name       string        `json:"name"`
	Selected   bool          `json:"selected"`
	FilteredBy string        `json:"filteredBy"`
	Message    string        `json:"message"`
	Scores     []ScoreOutput `json:"scores"`
	TotalScore int64         `json:"totalScore"`
}

// ScoreOutput is one prioritizer's weight and normalized score, and the figures it comes from
// when the prioritizer gives them (GPUFree, GPUBinPack). Detail is the one key left out when
// empty, so that the output of every other prioritizer keeps its documented shape.
type ScoreOutput struct {
	Prioritizer string `json:"prioritizer"`
	Weight      int32  `json:"weight"`
	Score       int64  `json:"score"`
	Detail      string `json:"detail,omitempty"`
}

// NewOutput converts res, the result of scheduling ns/name. Decisions are in the order the
// PlacementDecisions hold them: slice by slice, then within each slice.
func NewOutput(ns, name string, res *scheduler.Result) Output {
	out := Output{
		Placement:  PlacementRef{Namespace: ns, Name: name},
		Decisions:  []DecisionOutput{},
		Clusters:   make([]ClusterOutput, 0, len(res.Clusters)),
		Conditions: res.Conditions,
	}
	if out.Conditions == nil {
		out.Conditions = []metav1.Condition{}
	}
	byName := make(map[string]scheduler.Decision, len(res.Decisions))
	for _, d := range res.Decisions {
		byName[d.ClusterName] = d
	}
	for _, s := range res.PlacementDecisions {
		for _, cd := range s.Decisions {
			d, ok := byName[cd.ClusterName]
			if !ok {
				continue
			}
			out.Decisions = append(out.Decisions, DecisionOutput{ClusterName: d.ClusterName, Score: d.Score, Reason: d.Reason,
				DecisionGroupIndex: d.DecisionGroupIndex, DecisionGroupName: d.DecisionGroupName})
		}
	}
	for _, c := range res.Clusters {
		co := ClusterOutput{Name: c.Name, Selected: c.Selected, FilteredBy: c.FilteredBy, Message: message(c),
			Scores: make([]ScoreOutput, 0, len(c.Scores)), TotalScore: c.TotalScore}
		for _, s := range c.Scores {
			co.Scores = append(co.Scores, ScoreOutput{Prioritizer: s.Prioritizer, Weight: s.Weight, Score: s.Score, Detail: s.Detail})
		}
		out.Clusters = append(out.Clusters, co)
	}
	return out
}

// message is the explanation's message followed by its warnings (a missing or expired
// AddOnPlacementScore), which the JSON form has no field of their own for.
func message(c scheduler.ClusterExplanation) string {
	parts := make([]string, 0, 1+len(c.Warnings))
	if c.Message != "" {
		parts = append(parts, c.Message)
	}
	for _, w := range c.Warnings {
		parts = append(parts, "warning: "+w)
	}
	return strings.Join(parts, "; ")
}
