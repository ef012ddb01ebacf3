package builtin

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WatchRetry is how soon a watch that failed to start is started again.
const WatchRetry = 5 * time.Second

// Signal sends a token on ch unless one is already waiting.
func Signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// OwnWrites remembers the resourceVersion each of a loop's own writes produced, by object, so
// that the loop's watch does not wake it for them: its own write tells it nothing new, and on a
// cluster with many agents every such wake-up is a list for nothing. The zero value is ready.
type OwnWrites struct {
	mu sync.Mutex
	rv map[types.UID]string
	// last is the loop's last write of each object noted with Wrote, and the resourceVersion it
	// replaced.
	last map[types.UID]ownWrite
}

type ownWrite struct {
	base string
	obj  runtime.Object
}

// Wrote notes obj, as a write made on resourceVersion base returned it, as the loop's own (Note)
// and as what a Mirror's Items answer for it until a mirror has caught up with it.
func (o *OwnWrites) Wrote(base string, obj client.Object) {
	if o == nil || obj.GetUID() == "" {
		return
	}
	o.Note(obj)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		o.last = map[types.UID]ownWrite{}
	}
	o.last[obj.GetUID()] = ownWrite{base: base, obj: obj.DeepCopyObject()}
}

// latest is obj as a mirror holds it, or, while the mirror still holds the version that the
// loop's own last write replaced, that write: a pass right after a write compares with what it
// wrote, not with what was there before (which would write again, and be refused as a Conflict).
func latest[T client.Object](o *OwnWrites, obj T) T {
	if o == nil {
		return obj
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.last[obj.GetUID()]
	if !ok {
		return obj
	}
	if obj.GetResourceVersion() == w.base {
		if t, ok := w.obj.DeepCopyObject().(T); ok {
			return t
		}
	}
	delete(o.last, obj.GetUID()) // the mirror has the write, or a later one of someone else
	return obj
}

// Note records obj, as a write returned it, as the loop's own.
func (o *OwnWrites) Note(obj client.Object) {
	if o == nil || obj.GetUID() == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rv == nil {
		o.rv = map[types.UID]string{}
	}
	o.rv[obj.GetUID()] = obj.GetResourceVersion()
}

// ownObject reports whether x, as a watch delivered it, is the loop's own last write of it.
func (o *OwnWrites) ownObject(x any) bool {
	obj, ok := x.(client.Object)
	if o == nil || !ok {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	rv, noted := o.rv[obj.GetUID()]
	return noted && rv == obj.GetResourceVersion()
}

// Watch signals changed on every change of the objects of list's kind that opts select (and once
// per watch it starts, for what it may have missed), until ctx ends: how a built-in add-on's sync
// loop learns that something changed. (A loop that also reads the objects uses a Mirror.)
func Watch(ctx context.Context, clk clock.Clock, log logr.Logger, wc client.WithWatch, list client.ObjectList, changed chan<- struct{}, opts ...client.ListOption) {
	for ctx.Err() == nil {
		w, err := wc.Watch(ctx, list, opts...)
		if err == nil {
			Signal(changed)
			for range w.ResultChan() {
				Signal(changed)
			}
			w.Stop()
			continue
		}
		log.V(1).Info("watching failed; trying again", "kind", list.GetObjectKind().GroupVersionKind().Kind, "error", err.Error())
		select {
		case <-ctx.Done():
		case <-clk.After(WatchRetry):
		}
	}
}
