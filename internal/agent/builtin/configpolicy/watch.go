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

// watchKey is a kind watched in one namespace ("": every namespace, or a cluster-scoped kind).
type watchKey struct {
	schema.GroupVersionResource
	Namespace string
}

// objectWatches watch, by metadata only, the kinds the cluster's policies check (in the one
// namespace a template names, else everywhere), and note which changed: a policy whose
// evaluationInterval is watch (or unset) is evaluated again when a kind it checks changes, so
// drift is found when it happens rather than at the next resync.
type objectWatches struct {
	client  metadata.Interface
	changed chan<- struct{}

	mu      sync.Mutex
	running map[watchKey]context.CancelFunc
	dirty   map[watchKey]bool
}

func newObjectWatches(client metadata.Interface, changed chan<- struct{}) *objectWatches {
	return &objectWatches{client: client, changed: changed, running: map[watchKey]context.CancelFunc{},
		dirty: map[watchKey]bool{}}
}

// keep runs a watch of each kind in want and stops the others.
func (w *objectWatches) keep(ctx context.Context, want map[watchKey]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, stop := range w.running {
		if !want[key] {
			stop()
			delete(w.running, key)
			delete(w.dirty, key)
		}
	}
	for key := range want {
		if _, ok := w.running[key]; ok {
			continue
		}
		wctx, stop := context.WithCancel(ctx)
		w.running[key] = stop
		inf := metadatainformer.NewFilteredMetadataInformer(w.client, key.GroupVersionResource, key.Namespace, 0, toolscache.Indexers{}, nil).Informer()
		mark := func(any) { w.mark(key) }
		_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: mark, UpdateFunc: func(_, o any) { mark(o) }, DeleteFunc: mark,
		})
		go inf.RunWithContext(wctx)
	}
}

func (w *objectWatches) mark(key watchKey) {
	w.keepDirty(key)
	builtin.Signal(w.changed)
}

// keepDirty notes key as changed without waking the loop: a change taken but not yet acted on,
// which the loop comes back to after MinWatchGap (waking it now would only spin until then).
func (w *objectWatches) keepDirty(key watchKey) {
	w.mu.Lock()
	w.dirty[key] = true
	w.mu.Unlock()
}

// take returns the kinds that changed since the last take.
func (w *objectWatches) take() map[watchKey]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.dirty
	w.dirty = map[watchKey]bool{}
	return out
}

// stop ends every watch.
func (w *objectWatches) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, stop := range w.running {
		stop()
		delete(w.running, key)
	}
}

// MinWatchGap is the least time between two evaluations of a policy that changes of the kinds it
// checks bring about: a kind that changes all the time (pods) costs a policy at most one
// evaluation a second.
const MinWatchGap = time.Second
