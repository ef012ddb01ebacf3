package framework

import (
	"fmt"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// Plugin is what every extension point embeds.
type Plugin interface {
	Name() string
}

// FilterPlugin decides whether a candidate cluster stays. A nil Status means it stays.
type FilterPlugin interface {
	Plugin
	Filter(cluster *clusterv1.ManagedCluster) *Status
}

// ScorePlugin gives a cluster that passed every filter a score. Scores end up in
// [MinScore, MaxScore]; a plugin whose raw values are on another scale also implements
// NormalizeScorePlugin.
type ScorePlugin interface {
	Plugin
	Score(cluster *clusterv1.ManagedCluster) (int64, *Status)
}

// NormalizeScorePlugin rescales, in place, the raw scores that Score returned for all the clusters
// that passed the filters (in the same order as clusters).
type NormalizeScorePlugin interface {
	ScorePlugin
	NormalizeScore(clusters []*clusterv1.ManagedCluster, scores []int64)
}

// Score bounds, as OCM's.
const (
	MinScore int64 = -100
	MaxScore int64 = 100
)

// Handle is the read-only view of the placement and its snapshot that plugins are built with.
type Handle interface {
	Placement() *clusterv1beta1.Placement
	// Now is the scheduling time, from the caller's clock.
	Now() time.Time
	// InCurrentDecisions reports whether the cluster is among this placement's current decisions.
	InCurrentDecisions(cluster string) bool
	// OtherDecisionCounts maps a cluster name to the number of OTHER placements that selected it.
	OtherDecisionCounts() map[string]int
	// AddOnPlacementScore returns the AddOnPlacementScore named name in the cluster's namespace,
	// or nil.
	AddOnPlacementScore(cluster, name string) *clusterv1alpha1.AddOnPlacementScore
	// ResourceUsage returns the cluster's ResourceUsage (usagev1alpha1.ResourceUsageName in the
	// cluster's namespace), or nil when there is none. It is returned even when its figures have
	// expired, so that the caller can say since when: check Status.Valid(Now()) before using them.
	ResourceUsage(cluster string) *usagev1alpha1.ResourceUsage
	// CurrentDecisions are this placement's decisions as its PlacementDecisions hold them now,
	// with their scores and reasons; nil when the caller did not supply them.
	CurrentDecisions() []clusterv1beta1.ClusterDecision
	// ClusterObject returns the cluster, one of the snapshot's, as an unstructured map (what CEL
	// sees as managedCluster). It is converted once per snapshot and shared: never change it.
	ClusterObject(cluster *clusterv1.ManagedCluster) (map[string]any, error)
	// PerCluster returns f's value for every cluster of the snapshot, by cluster. It is computed
	// once per snapshot and shared by every placement scheduled against it, so f must depend on
	// the cluster and the snapshot only (not on the placement or the time), and key must name f
	// and its arguments. A prioritizer looks its table up once, in its factory, and then reads it
	// for each cluster: one map read instead of parsing the cluster's status again.
	PerCluster(key string, f func(*clusterv1.ManagedCluster) int64) map[*clusterv1.ManagedCluster]int64
}

// Args is what a factory gets besides the Handle. Prioritizers get the score coordinate of their
// configuration and its index in spec.prioritizerPolicy.configurations (-1 when the mode implied it).
type Args struct {
	Coordinate *clusterv1beta1.ScoreCoordinate
	Index      int
}

// Factory builds a plugin for one scheduling of one placement. A *ConfigError it returns makes
// the placement misconfigured. A filter, select or decide plugin's factory may return a nil
// Plugin (and no error) when the placement does not use it, so that the scheduler skips it.
type Factory func(h Handle, args Args) (Plugin, error)

// Registry maps plugin names to their factories. Prioritizers are registered under their built-in
// name (Steady, Balance, ...) or under the score coordinate type (AddOn).
type Registry map[string]Factory

// ConfigError is a placement configuration the scheduler cannot act on. Field is the path in the
// Placement, such as spec.prioritizerPolicy.configurations[0].scoreCoordinate.builtIn.
type ConfigError struct {
	Field   string
	Message string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

// NoMatchExplainer is a FilterPlugin that can say, when no candidate passed the filters, what
// the placement asks for that none of them has and what would fix it; the core adds its
// non-empty answer to PlacementSatisfied's message.
type NoMatchExplainer interface {
	FilterPlugin
	NoMatch(candidates []*clusterv1.ManagedCluster) string
}

// SelectPlugin takes part in choosing among the ranked clusters that passed the filters (such as
// spec.spreadPolicy). The core offers the clusters in rank order and chooses, each time, the
// best-ranked one that every SelectPlugin admits; when none remains and slots are left, it fills
// them in rank order with clusters refused only with Demoted.
type SelectPlugin interface {
	Plugin
	// Start gets the ranked clusters that passed the filters, before any is chosen.
	Start(ranked []*clusterv1.ManagedCluster)
	// Admit says whether the cluster may be chosen next. nil admits it; Unschedulable refuses
	// it; Demoted refuses it unless only slots to fill remain. A refusal must hold until Chose
	// reports reopen.
	Admit(cluster *clusterv1.ManagedCluster) *Status
	// Chose records that the cluster was chosen; reopen reports that a cluster refused before
	// may be admitted now.
	Chose(cluster *clusterv1.ManagedCluster) (reopen bool)
}

// OrderPlugin orders the decisions inside each decision group (spec.sortBy); group membership
// does not depend on it. Compare returns <0 when a goes before b, and must be a total order.
type OrderPlugin interface {
	Plugin
	Compare(a, b clusterv1beta1.ClusterDecision) int
}

// DecidePlugin sees the chosen clusters' decisions, as this placement's PlacementDecisions
// would hold them, before they are grouped and ordered; it may change their scores and reasons
// in place, never which clusters they name. The core adds the Status's Message to the
// explanation of each decision it changed, and honors its RequeueAfter.
type DecidePlugin interface {
	Plugin
	Decide(decisions []clusterv1beta1.ClusterDecision) *Status
}
