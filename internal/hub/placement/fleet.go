package placement

import (
	"context"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// fleetSnapshot keeps the fleet part of the scheduler's snapshot (clusters, sets, bindings,
// scores and ResourceUsages, listed from the cache) between reconciles, until an event on any of them says it is
// stale. Thousands of placements scheduled while the fleet stands still then share one list of
// it and one scores index, instead of copying the whole fleet out of the cache each.
type fleetSnapshot struct {
	// generation counts the fleet's events; a snapshot listed at an older one is stale.
	generation atomic.Uint64

	mu   sync.Mutex
	snap *scheduler.Snapshot
	gen  uint64
}

// invalidate marks the kept snapshot stale. The informer has already stored the change when its
// event handlers run, so a list made after this call sees it.
func (f *fleetSnapshot) invalidate() { f.generation.Add(1) }

// get returns the fleet's snapshot, listing it again when an event came since it was listed. The
// result is shared and read-only.
func (f *fleetSnapshot) get(ctx context.Context, c client.Reader) (*scheduler.Snapshot, error) {
	gen := f.generation.Load()
	f.mu.Lock()
	if f.snap != nil && f.gen == gen {
		s := f.snap
		f.mu.Unlock()
		return s, nil
	}
	f.mu.Unlock()

	// The scheduler only reads: no deep copies of the whole fleet.
	noCopy := client.UnsafeDisableDeepCopy
	clusters := &clusterv1.ManagedClusterList{}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	scores := &clusterv1alpha1.AddOnPlacementScoreList{}
	usages := &usagev1alpha1.ResourceUsageList{}
	for _, l := range []client.ObjectList{clusters, sets, bindings, scores, usages} {
		if err := c.List(ctx, l, noCopy); err != nil {
			return nil, err
		}
	}
	s := &scheduler.Snapshot{Clusters: clusters.Items, Sets: sets.Items, Bindings: bindings.Items, Scores: scores.Items,
		ResourceUsages: usages.Items}
	f.mu.Lock()
	if f.snap == nil || gen >= f.gen {
		f.snap, f.gen = s, gen
	}
	f.mu.Unlock()
	return s, nil
}
