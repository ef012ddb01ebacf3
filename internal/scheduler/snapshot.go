package scheduler

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// Snapshot is everything Schedule reads besides the Placement and the time. The caller builds it
// from informers (the controller) or from a file (the simulator); Schedule never changes it.
type Snapshot struct {
	Clusters []clusterv1.ManagedCluster         `json:"clusters,omitempty"`
	Sets     []clusterv1beta2.ManagedClusterSet `json:"sets,omitempty"`
	// Bindings may hold bindings of every namespace; only the placement's count.
	Bindings []clusterv1beta2.ManagedClusterSetBinding `json:"bindings,omitempty"`
	// Scores are AddOnPlacementScores; each lives in its cluster's namespace.
	Scores []clusterv1alpha1.AddOnPlacementScore `json:"scores,omitempty"`
	// CurrentDecisions are the cluster names in this placement's PlacementDecisions now.
	CurrentDecisions []string `json:"currentDecisions,omitempty"`
	// CurrentScores are this placement's decisions as its PlacementDecisions hold them now,
	// with their scores and reasons (CurrentClusterDecisions derives them). spec.scoreRateLimit
	// compares the new scores with these, and with status.lastScoreUpdateTime, to hold back a
	// change of scores alone; when nil, scores are never held.
	CurrentScores []clusterv1beta1.ClusterDecision `json:"currentScores,omitempty"`
	// OtherDecisionCounts maps a cluster name to how many OTHER placements selected it.
	OtherDecisionCounts map[string]int `json:"otherDecisionCounts,omitempty"`
}
