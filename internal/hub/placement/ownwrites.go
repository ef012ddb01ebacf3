package placement

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// ownWrites remembers what the controller is writing to each PlacementDecision, so that the watch
// events of its own writes do not schedule the placement again. Without it every write queues
// its placement once more, and with Balance (whose scores follow the other placements'
// decisions, which change meanwhile) the new run often decides differently, writes, and queues
// itself again: a fleet of placements that never settles. A write is recorded before it is sent,
// so its event cannot arrive first; a write that fails is forgotten.
type ownWrites struct {
	mu      sync.Mutex
	pending map[types.NamespacedName][]ownWrite
}

// ownWrite is one write: the PlacementDecision's content after it (its OCM labels and
// decisions), or its deletion.
type ownWrite struct {
	deleted bool
	content scheduler.PlacementDecisionSlice
}

// maxPending bounds the writes remembered per PlacementDecision; writes to one object are
// sequential, so more than a few are never outstanding.
const maxPending = 8

func newOwnWrites() *ownWrites {
	return &ownWrites{pending: map[types.NamespacedName][]ownWrite{}}
}

// expect records a write about to be sent.
func (o *ownWrites) expect(key types.NamespacedName, w ownWrite) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ws := append(o.pending[key], w)
	if len(ws) > maxPending {
		ws = ws[len(ws)-maxPending:]
	}
	o.pending[key] = ws
}

// forget drops a recorded write that failed.
func (o *ownWrites) forget(key types.NamespacedName, w ownWrite) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ws := o.pending[key]
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].matches(w) {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	o.set(key, ws)
}

// observed reports whether an event (d's new state, or its deletion) is the result of a recorded
// write, and drops that write and any recorded before it (their events were superseded).
func (o *ownWrites) observed(d *clusterv1beta1.PlacementDecision, deleted bool) bool {
	key := types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
	seen := ownWrite{deleted: deleted, content: asSlice(d)}
	o.mu.Lock()
	defer o.mu.Unlock()
	ws := o.pending[key]
	for i, w := range ws {
		if w.matches(seen) {
			o.set(key, ws[i+1:])
			return true
		}
	}
	return false
}

func (o *ownWrites) set(key types.NamespacedName, ws []ownWrite) {
	if len(ws) == 0 {
		delete(o.pending, key)
		return
	}
	o.pending[key] = ws
}

func (w ownWrite) matches(v ownWrite) bool {
	if w.deleted || v.deleted {
		return w.deleted == v.deleted
	}
	return Same(w.content, v.content)
}
