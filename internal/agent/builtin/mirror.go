package builtin

import (
	"context"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Mirror keeps in memory the objects of one kind that a list's options select (client-go's
// reflector: listed once, then watched) and signals a loop on every change of them that is not
// the loop's own write. The loop reads them from the mirror instead of listing on every pass, so
// a cluster's agent costs its API servers nothing while nothing changes, and the hub serves
// 1,000 clusters' agents without 1,000 lists a resync.
//
// What a mirror holds may trail a write the loop just made by the time its watch event takes:
// Items answers the loop's own last write (OwnWrites.Wrote) until the mirror has it. A loop that
// writes with a resourceVersion from the mirror may still get a Conflict when someone else wrote
// meanwhile, and tries again after RetryAfterError.
type Mirror[T client.Object] struct {
	store toolscache.Store
	own   *OwnWrites
}

// RetryAfterError is how soon a loop whose pass failed tries again: long enough for its mirrors
// to catch up with its own last writes.
const RetryAfterError = time.Second

// NewMirror mirrors, until ctx ends, the objects of list's kind (newList makes an empty list)
// that opts select, signaling changed for each change that own did not note. It returns once the
// first list is in (an error only when ctx ends first).
func NewMirror[T client.Object](ctx context.Context, wc client.WithWatch, newList func() client.ObjectList, changed chan<- struct{}, own *OwnWrites, opts ...client.ListOption) (*Mirror[T], error) {
	with := func(o metav1.ListOptions) []client.ListOption {
		return append(append([]client.ListOption{}, opts...), &client.ListOptions{Raw: &o})
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l := newList()
			return l, wc.List(ctx, l, with(o)...)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return wc.Watch(ctx, newList(), with(o)...)
		},
	}
	signal := func(obj any) {
		if !own.ownObject(obj) {
			Signal(changed)
		}
	}
	var zero T
	store, ctrl := toolscache.NewInformerWithOptions(toolscache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T),
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    signal,
			UpdateFunc: func(_, obj any) { signal(obj) },
			DeleteFunc: func(any) { Signal(changed) }, // a deletion is always news
		},
	})
	go ctrl.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced) {
		return nil, fmt.Errorf("the mirror did not fill: %w", ctx.Err())
	}
	return &Mirror[T]{store: store, own: own}, nil
}

// Items returns copies of the mirrored objects, which the caller may change; an object the
// loop's own last write changed and the mirror does not have yet is that write.
func (m *Mirror[T]) Items() []T {
	all := m.store.List()
	out := make([]T, 0, len(all))
	for _, o := range all {
		if t, ok := o.(T); ok {
			out = append(out, latest(m.own, t.DeepCopyObject().(T)))
		}
	}
	return out
}

// MirrorOf is a mirror that holds objs and never changes, answering own's last writes as Items
// does (own may be nil): for tests of a loop's logic.
func MirrorOf[T client.Object](own *OwnWrites, objs ...T) *Mirror[T] {
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	for _, o := range objs {
		_ = store.Add(o) // a key of a namespace and a name cannot fail
	}
	return &Mirror[T]{store: store, own: own}
}
