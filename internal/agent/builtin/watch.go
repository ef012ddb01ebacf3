package builtin

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
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

// own reports whether the event is of the loop's own last write of its object.
func (o *OwnWrites) own(ev watch.Event) bool {
	obj, ok := ev.Object.(client.Object)
	if o == nil || (ev.Type != watch.Added && ev.Type != watch.Modified) || !ok {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	rv, noted := o.rv[obj.GetUID()]
	return noted && rv == obj.GetResourceVersion()
}

// Watch signals changed on every change of the objects of list's kind that opts select (and once
// per watch it starts, for what it may have missed), until ctx ends: how a built-in add-on's sync
// loop learns that something changed. A change own noted as the loop's own write (own may be
// nil) does not signal.
func Watch(ctx context.Context, clk clock.Clock, log logr.Logger, wc client.WithWatch, list client.ObjectList, changed chan<- struct{}, own *OwnWrites, opts ...client.ListOption) {
	for ctx.Err() == nil {
		w, err := wc.Watch(ctx, list, opts...)
		if err == nil {
			Signal(changed)
			for ev := range w.ResultChan() {
				if !own.own(ev) {
					Signal(changed)
				}
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
