package scheduler

import (
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

var _ framework.Handle = &handle{}

// handle is the framework.Handle of one scheduling.
type handle struct {
	placement *clusterv1beta1.Placement
	now       time.Time
	current   map[string]bool
	counts    map[string]int
	cache     *snapshotCache
	clusters  []clusterv1.ManagedCluster
	decisions []clusterv1beta1.ClusterDecision
}

func newHandle(p *clusterv1beta1.Placement, snap *Snapshot, now time.Time) *handle {
	h := &handle{placement: p, now: now, counts: snap.OtherDecisionCounts, decisions: snap.CurrentScores,
		current: make(map[string]bool, len(snap.CurrentDecisions)), cache: snap.cached(), clusters: snap.Clusters}
	for _, c := range snap.CurrentDecisions {
		h.current[c] = true
	}
	return h
}

func (h *handle) Placement() *clusterv1beta1.Placement   { return h.placement }
func (h *handle) Now() time.Time                         { return h.now }
func (h *handle) InCurrentDecisions(cluster string) bool { return h.current[cluster] }
func (h *handle) OtherDecisionCounts() map[string]int    { return h.counts }
func (h *handle) AddOnPlacementScore(cluster, name string) *clusterv1alpha1.AddOnPlacementScore {
	return h.cache.scores[[2]string{cluster, name}]
}
func (h *handle) ResourceUsage(cluster string) *usagev1alpha1.ResourceUsage {
	return h.cache.usages[cluster]
}
func (h *handle) ClusterObject(c *clusterv1.ManagedCluster) (map[string]any, error) {
	return h.cache.object(c)
}
func (h *handle) PerCluster(key string, f func(*clusterv1.ManagedCluster) int64) map[*clusterv1.ManagedCluster]int64 {
	return h.cache.table(key, h.clusters, f)
}
func (h *handle) CurrentDecisions() []clusterv1beta1.ClusterDecision { return h.decisions }
