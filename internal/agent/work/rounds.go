package work

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// rounds remembers, for each work this agent has applied in full, the generation it applied and
// the AppliedManifestWork the round ended with. The memory is the controller's: an agent that
// starts (again) gives every work a full round first.
type rounds struct {
	mu   sync.Mutex
	done map[types.NamespacedName]appliedRound
}

type appliedRound struct {
	generation int64
	applied    *workv1.AppliedManifestWork
}

// applied returns a copy of the AppliedManifestWork of the work's last full round when that
// round applied this generation, else nil.
func (r *rounds) applied(work types.NamespacedName, generation int64) *workv1.AppliedManifestWork {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.done[work]
	if !ok || d.generation != generation {
		return nil
	}
	return d.applied.DeepCopy()
}

// remember records a full round of generation that ended with amw.
func (r *rounds) remember(work types.NamespacedName, generation int64, amw *workv1.AppliedManifestWork) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = map[types.NamespacedName]appliedRound{}
	}
	r.done[work] = appliedRound{generation: generation, applied: amw.DeepCopy()}
}

// forget drops what is remembered of a work: its next round is a full one.
func (r *rounds) forget(work types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.done, work)
}
