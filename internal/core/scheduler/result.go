package scheduler

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// Result is the outcome of scheduling one placement. It is plain data: the controller writes it,
// the explain endpoint and the CLI print it.
type Result struct {
	// Decisions in the order the PlacementDecisions hold them (group by group, by name within one).
	Decisions []Decision `json:"decisions"`
	// Groups are the decision groups, for status.decisionGroups.
	Groups []DecisionGroup `json:"groups"`
	// PlacementDecisions are the decisions sliced into objects of at most 100, with OCM's names and
	// labels. There is always at least one, possibly empty.
	PlacementDecisions []PlacementDecisionSlice `json:"placementDecisions"`
	// Conditions are PlacementSatisfied (absent when misconfigured: keep the decisions there are)
	// and PlacementMisconfigured.
	Conditions []metav1.Condition `json:"conditions"`
	// Misconfigured is true when the placement cannot be scheduled as written; Decisions are then
	// empty and the caller keeps the existing PlacementDecisions.
	Misconfigured bool `json:"misconfigured,omitempty"`
	// RequeueAfter, when positive, is when to schedule again because a toleration expires.
	RequeueAfter time.Duration `json:"requeueAfter,omitempty"`
	// LastScoreUpdateTime is what status.lastScoreUpdateTime should say once the decisions are
	// written (see spec.scoreRateLimit): the time of this scheduling when it writes a score or
	// reason the current decisions (Snapshot.CurrentScores) do not hold, else the placement's.
	LastScoreUpdateTime *metav1.Time `json:"lastScoreUpdateTime,omitempty"`
	// Clusters explains every member of the eligible sets, by name.
	Clusters []ClusterExplanation `json:"clusters"`
}

// Decision is one selected cluster.
type Decision struct {
	ClusterName string `json:"clusterName"`
	Score       int64  `json:"score"`
	// Reason is short: "score 187 = Steady 100 + Balance 87".
	Reason             string `json:"reason"`
	DecisionGroupIndex int32  `json:"decisionGroupIndex"`
	DecisionGroupName  string `json:"decisionGroupName"`
}

// DecisionGroup is one decision group.
type DecisionGroup struct {
	Index    int32    `json:"decisionGroupIndex"`
	Name     string   `json:"decisionGroupName"`
	Clusters []string `json:"clusters"`
}

// PlacementDecisionSlice is the content of one PlacementDecision.
type PlacementDecisionSlice struct {
	Name      string                           `json:"name"`
	Labels    map[string]string                `json:"labels"`
	Decisions []clusterv1beta1.ClusterDecision `json:"decisions"`
}

// ClusterExplanation says what happened to one cluster.
type ClusterExplanation struct {
	Name     string `json:"name"`
	Selected bool   `json:"selected"`
	// FilteredBy names the plugin (or ClusterSet) that removed the cluster; empty when it passed.
	FilteredBy string `json:"filteredBy,omitempty"`
	// Message says why it was filtered, demoted or not chosen.
	Message string `json:"message,omitempty"`
	// Scores are each prioritizer's normalised score and weight; TotalScore is sum(weight*score).
	Scores     []PrioritizerScore `json:"scores,omitempty"`
	TotalScore int64              `json:"totalScore"`
	// Rank is the 1-based position among the clusters that passed the filters; 0 when filtered.
	Rank     int      `json:"rank,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// PrioritizerScore is one prioritizer's contribution.
type PrioritizerScore struct {
	Prioritizer string `json:"prioritizer"`
	Weight      int32  `json:"weight"`
	Score       int64  `json:"score"`
	// Detail is the figures the score comes from, when the prioritizer gives them (GPUFree,
	// GPUBinPack).
	Detail string `json:"detail,omitempty"`
}
