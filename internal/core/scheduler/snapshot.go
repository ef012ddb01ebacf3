package scheduler

import (
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/clusterset"
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
	// ResourceUsages are the clusters' ResourceUsages (each named
	// usagev1alpha1.ResourceUsageName in its cluster's namespace; others are ignored): what the
	// GPU fit filter, the GPU prioritizers and the CEL GPU functions read.
	ResourceUsages []usagev1alpha1.ResourceUsage `json:"resourceUsages,omitempty"`
	// CurrentDecisions are the cluster names in this placement's PlacementDecisions now.
	CurrentDecisions []string `json:"currentDecisions,omitempty"`
	// CurrentScores are this placement's decisions as its PlacementDecisions hold them now,
	// with their scores and reasons (CurrentClusterDecisions derives them). spec.scoreRateLimit
	// compares the new scores with these, and with status.lastScoreUpdateTime, to hold back a
	// change of scores alone; when nil, scores are never held.
	CurrentScores []clusterv1beta1.ClusterDecision `json:"currentScores,omitempty"`
	// OtherDecisionCounts maps a cluster name to how many OTHER placements selected it.
	OtherDecisionCounts map[string]int `json:"otherDecisionCounts,omitempty"`

	// cache is built on first use and shared by every placement scheduled against this
	// snapshot, concurrently or not; the snapshot must not change once scheduled against.
	cache atomic.Pointer[snapshotCache]
}

// snapshotCache holds what is derived from a Snapshot once for all its placements.
type snapshotCache struct {
	// scores indexes Snapshot.Scores by (namespace, name).
	scores map[[2]string]*clusterv1alpha1.AddOnPlacementScore
	// usages indexes Snapshot.ResourceUsages by cluster (namespace).
	usages map[string]*usagev1alpha1.ResourceUsage
	// objects maps a *clusterv1.ManagedCluster of the snapshot to its unstructured form (an
	// *unstructuredObject), converted when first asked for.
	objects sync.Map
	// perCluster maps a PerCluster key to its *perClusterTable.
	perCluster sync.Map
	// members maps eligible set names (joined by NUL) to their *membersOnce.
	members sync.Map
}

type membersOnce struct {
	once sync.Once
	res  clusterset.Result
}

type perClusterTable struct {
	once   sync.Once
	values map[*clusterv1.ManagedCluster]int64
}

type unstructuredObject struct {
	obj map[string]any
	err error
}

// cached returns the snapshot's cache, building it on first use.
func (s *Snapshot) cached() *snapshotCache {
	if c := s.cache.Load(); c != nil {
		return c
	}
	c := &snapshotCache{scores: make(map[[2]string]*clusterv1alpha1.AddOnPlacementScore, len(s.Scores))}
	for i := range s.Scores {
		sc := &s.Scores[i]
		c.scores[[2]string{sc.Namespace, sc.Name}] = sc
	}
	if len(s.ResourceUsages) > 0 {
		c.usages = make(map[string]*usagev1alpha1.ResourceUsage, len(s.ResourceUsages))
		for i := range s.ResourceUsages {
			if u := &s.ResourceUsages[i]; u.Name == usagev1alpha1.ResourceUsageName {
				c.usages[u.Namespace] = u
			}
		}
	}
	if !s.cache.CompareAndSwap(nil, c) {
		return s.cache.Load()
	}
	return c
}

// table returns f's value for every cluster of clusters (the snapshot's), computed at the first
// call for key.
func (c *snapshotCache) table(key string, clusters []clusterv1.ManagedCluster, f func(*clusterv1.ManagedCluster) int64) map[*clusterv1.ManagedCluster]int64 {
	v, _ := c.perCluster.LoadOrStore(key, &perClusterTable{})
	t := v.(*perClusterTable)
	t.once.Do(func() {
		t.values = make(map[*clusterv1.ManagedCluster]int64, len(clusters))
		for i := range clusters {
			t.values[&clusters[i]] = f(&clusters[i])
		}
	})
	return t.values
}

// candidates returns the clusterset plugin's result for p: the members of its eligible sets
// are worked out once per snapshot for each combination of sets and shared (read-only).
func (s *Snapshot) candidates(p *clusterv1beta1.Placement) clusterset.Result {
	eligible, res := clusterset.Eligible(p, s.Sets, s.Bindings)
	if res.Reason != "" {
		return res
	}
	v, _ := s.cached().members.LoadOrStore(strings.Join(eligible, "\x00"), &membersOnce{})
	m := v.(*membersOnce)
	m.once.Do(func() { m.res = clusterset.Members(eligible, s.Sets, s.Clusters) })
	return m.res
}

// object returns the cluster, which must be one of the snapshot's, as an unstructured map,
// converting it only the first time.
func (c *snapshotCache) object(cl *clusterv1.ManagedCluster) (map[string]any, error) {
	if v, ok := c.objects.Load(cl); ok {
		u := v.(*unstructuredObject)
		return u.obj, u.err
	}
	u := &unstructuredObject{}
	u.obj, u.err = runtime.DefaultUnstructuredConverter.ToUnstructured(cl)
	v, _ := c.objects.LoadOrStore(cl, u)
	u = v.(*unstructuredObject)
	return u.obj, u.err
}

// ForPlacement returns a snapshot of the same fleet (clusters, sets, bindings, scores and resource usages, not
// copied) with one placement's own inputs, sharing what Schedule derives from the fleet (the
// scores index, CEL's view of each cluster). The controller keeps one fleet snapshot while the
// fleet does not change and schedules every placement against a ForPlacement of it; neither
// may be changed once scheduled against.
func (s *Snapshot) ForPlacement(current []string, currentScores []clusterv1beta1.ClusterDecision, others map[string]int) *Snapshot {
	out := &Snapshot{Clusters: s.Clusters, Sets: s.Sets, Bindings: s.Bindings, Scores: s.Scores, ResourceUsages: s.ResourceUsages,
		CurrentDecisions: current, CurrentScores: currentScores, OtherDecisionCounts: others}
	out.cache.Store(s.cached())
	return out
}
