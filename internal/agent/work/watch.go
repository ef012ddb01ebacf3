package work

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// watcher watches the applied objects whose manifestConfig asks for feedbackScrapeType Watch,
// each with an informer on that one object, and wakes the work when one changes; other
// manifests' feedback is read at the periodic resync.
type watcher struct {
	ctx    context.Context
	client dynamic.Interface
	events chan<- event.GenericEvent

	mu      sync.Mutex
	watches map[types.NamespacedName]map[watchKey]context.CancelFunc
}

type watchKey struct {
	GVR             schema.GroupVersionResource
	Namespace, Name string
}

func newWatcher(ctx context.Context, c dynamic.Interface, events chan<- event.GenericEvent) *watcher {
	return &watcher{ctx: ctx, client: c, events: events, watches: map[types.NamespacedName]map[watchKey]context.CancelFunc{}}
}

// track watches the objects of work that ask for it and stops watching the others.
func (w *watcher) track(work types.NamespacedName, outcomes []outcome) {
	if w == nil {
		return
	}
	want := map[watchKey]bool{}
	for _, o := range outcomes {
		if o.Config == nil || o.Config.FeedbackScrapeType != workv1.FeedbackWatchType || o.Live == nil {
			continue
		}
		want[watchKey{schema.GroupVersionResource{Group: o.Meta.Group, Version: o.Meta.Version, Resource: o.Meta.Resource}, o.Meta.Namespace, o.Meta.Name}] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	have := w.watches[work]
	for k, stop := range have {
		if !want[k] {
			stop()
			delete(have, k)
		}
	}
	if len(want) == 0 {
		delete(w.watches, work)
		return
	}
	if have == nil {
		have = map[watchKey]context.CancelFunc{}
		w.watches[work] = have
	}
	for k := range want {
		if _, ok := have[k]; !ok {
			have[k] = w.start(work, k)
		}
	}
}

// forget stops the watches of a work.
func (w *watcher) forget(work types.NamespacedName) {
	if w == nil {
		return
	}
	w.track(work, nil)
}

func (w *watcher) start(work types.NamespacedName, k watchKey) context.CancelFunc {
	ctx, cancel := context.WithCancel(w.ctx)
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.client, 0, k.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", k.Name).String()
	})
	inf := f.ForResource(k.GVR).Informer()
	wake := func(any) {
		obj := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: work.Namespace, Name: work.Name}}
		select {
		case w.events <- event.GenericEvent{Object: obj}:
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o any) { wake(o) },
		DeleteFunc: wake,
	})
	go inf.RunWithContext(ctx)
	return cancel
}
