package builtin

import (
	"context"
	"time"

	"github.com/go-logr/logr"
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

// Watch signals changed on every change of the objects of list's kind that opts select (and once
// per watch it starts, for what it may have missed), until ctx ends: how a built-in add-on's sync
// loop learns that something changed.
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
