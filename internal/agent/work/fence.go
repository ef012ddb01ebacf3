package work

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// verified remembers, per fenced work, the fence episode after which it was last read from the
// hub past the cache.
type verified struct {
	mu sync.Mutex
	m  map[client.ObjectKey]int64
}

func (v *verified) get(k client.ObjectKey) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.m[k]
}

func (v *verified) set(k client.ObjectKey, episode int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[client.ObjectKey]int64{}
	}
	v.m[k] = episode
}

// fenceGate says whether a fenced work must wait: while the fence is raised, and after a fence
// until the hub confirms, past the cache, that the work is still there (an outage may have ended
// with the work removed or moved, and the cache may not know yet).
func (r *Reconciler) fenceGate(ctx context.Context, work *workv1.ManifestWork) (bool, error) {
	if r.Fence == nil || !fencing.WorkFenced(work.Annotations) {
		return false, nil
	}
	if r.Fence.Fenced() {
		return true, nil
	}
	episode, key := r.Fence.Episodes(), client.ObjectKeyFromObject(work)
	if episode == 0 || r.verified.get(key) >= episode || r.HubReader == nil {
		return false, nil
	}
	live := &workv1.ManifestWork{}
	switch err := r.HubReader.Get(ctx, key, live); {
	case apierrors.IsNotFound(err):
		return true, nil // the cache hears of the deletion soon, and the work is removed then
	case err != nil:
		return true, err
	case live.UID != work.UID || !live.DeletionTimestamp.IsZero():
		return true, nil
	}
	r.verified.set(key, episode)
	return false, nil
}

// markFenced adds the fenced marks to the objects of a fenced work, so that the fence finds them.
func markFenced(work *workv1.ManifestWork, ms []manifest) {
	if !fencing.WorkFenced(work.Annotations) {
		return
	}
	labels, annotations := fencing.FencedLabels(work.Name)
	for _, m := range ms {
		if m.Obj == nil {
			continue
		}
		m.Obj.SetLabels(mergeMaps(m.Obj.GetLabels(), labels))
		m.Obj.SetAnnotations(mergeMaps(m.Obj.GetAnnotations(), annotations))
	}
}
