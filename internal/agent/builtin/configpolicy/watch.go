package configpolicy

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla/flotilla/internal/agent/builtin"
)

// objectWatches watch, by metadata only, the kinds the cluster's policies check, and note which
// kinds changed: a policy whose evaluationInterval is watch (or unset) is evaluated again when a
// kind it checks changes, so drift is found when it happens rather than at the next resync.
type objectWatches struct {
	client  metadata.Interface
	changed chan<- struct{}

	mu      sync.Mutex
	running map[schema.GroupVersionResource]context.CancelFunc
	dirty   map[schema.GroupVersionResource]bool
}

func newObjectWatches(client metadata.Interface, changed chan<- struct{}) *objectWatches {
	return &objectWatches{client: client, changed: changed, running: map[schema.GroupVersionResource]context.CancelFunc{},
		dirty: map[schema.GroupVersionResource]bool{}}
}

// keep runs a watch of each kind in want and stops the others.
func (w *objectWatches) keep(ctx context.Context, want map[schema.GroupVersionResource]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for gvr, stop := range w.running {
		if !want[gvr] {
			stop()
			delete(w.running, gvr)
			delete(w.dirty, gvr)
		}
	}
	for gvr := range want {
		if _, ok := w.running[gvr]; ok {
			continue
		}
		wctx, stop := context.WithCancel(ctx)
		w.running[gvr] = stop
		inf := metadatainformer.NewFilteredMetadataInformer(w.client, gvr, "", 0, toolscache.Indexers{}, nil).Informer()
		mark := func(any) { w.mark(gvr) }
		_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: mark, UpdateFunc: func(_, o any) { mark(o) }, DeleteFunc: mark,
		})
		go inf.RunWithContext(wctx)
	}
}

func (w *objectWatches) mark(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	w.dirty[gvr] = true
	w.mu.Unlock()
	builtin.Signal(w.changed)
}

// take returns the kinds that changed since the last take.
func (w *objectWatches) take() map[schema.GroupVersionResource]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.dirty
	w.dirty = map[schema.GroupVersionResource]bool{}
	return out
}

// stop ends every watch.
func (w *objectWatches) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for gvr, stop := range w.running {
		stop()
		delete(w.running, gvr)
	}
}

// MinWatchGap is the least time between two evaluations of a policy that changes of the kinds it
// checks bring about: a kind that changes all the time (pods) costs a policy at most one
// evaluation a second.
const MinWatchGap = time.Second
