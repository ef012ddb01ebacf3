package kueuequeues

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// Name is the add-on's name.
var Name = builtinaddon.KueueQueues.Name

// Defaults of AddOn's timings.
const (
	// DefaultDebounce is how long after a change of the nodes the objects are written: the
	// changes of that time are written together.
	DefaultDebounce = time.Second
	// DefaultResync is how often the objects are read and put right even when no node changed
	// (someone edited the ClusterQueue): the add-on watches nodes only.
	DefaultResync = 5 * time.Minute
)

// AddOn is the kueue-queues built-in add-on.
type AddOn struct {
	// Debounce is DefaultDebounce when zero; Resync DefaultResync.
	Debounce, Resync time.Duration
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

// Run watches the cluster's nodes and keeps Kueue's flavors and queues as they call for, a
// debounce after each change and every resync. It ends with an error when Kueue's API is not
// served, when an object of one of its names is someone else's (after writing the others), or
// when a write fails; the manager runs it again after its backoff.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	if ok, err := served(env.ClusterName, env.Spoke); err != nil || !ok {
		if err == nil {
			err = notServed(env.ClusterName)
		}
		return err
	}
	s, err := newSpoke(env.ClusterName, env.Spoke)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	store := newNodeStore()
	runCtx, stop := context.WithCancel(ctx)
	var reflector sync.WaitGroup
	// The reflector stops before Run returns, however it ends.
	defer reflector.Wait()
	defer stop()
	lw := toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", metav1.NamespaceAll, fields.Everything())
	r := toolscache.NewReflectorWithOptions(lw, &corev1.Node{}, store, toolscache.ReflectorOptions{Name: Name + " nodes", Clock: env.Clock})
	reflector.Go(func() { r.RunWithContext(runCtx) })
	select {
	case <-store.synced:
	case <-ctx.Done():
		return fmt.Errorf("cluster %s: reading the nodes: %w", env.ClusterName, context.Cause(ctx))
	}
	return a.loop(ctx, env, store, s, nil)
}

// applier writes the desired objects, returning how many it wrote (spoke.apply).
type applier interface {
	apply(ctx context.Context, d Desired) (int, error)
}

// loop writes what the store's nodes call for at once, a debounce after each change (when it
// differs from what was last written), and every resync, until ctx ends or a write fails.
// evaluated, if set, is called each time the loop has looked at the nodes (tests wait for it).
func (a AddOn) loop(ctx context.Context, env builtin.Env, store *nodeStore, w applier, evaluated func()) error {
	resync := env.Clock.NewTicker(builtin.OrDefault(a.Resync, DefaultResync))
	defer resync.Stop()
	var last *Desired
	var debounce clock.Timer
	defer func() {
		if debounce != nil {
			debounce.Stop()
		}
	}()
	var fire <-chan time.Time
	for due, force := true, true; ; {
		if due {
			nodes := store.list()
			d := Compute(nodes)
			if force || last == nil || !equality.Semantic.DeepEqual(*last, d) {
				if len(d.Dropped) > 0 {
					env.Log.Info("a resource group holds at most 64 flavors: GPU models left out", "models", d.Dropped)
				}
				writes, err := w.apply(ctx, d)
				if writes > 0 {
					env.Log.Info("Kueue's flavors and queues written", "objects", writes, "flavors", len(d.Flavors), "nodes", len(nodes))
				}
				if err != nil {
					return err
				}
				last = &d
			}
			due, force = false, false
			if evaluated != nil {
				evaluated()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-store.changed:
			if fire == nil {
				debounce = env.Clock.NewTimer(builtin.OrDefault(a.Debounce, DefaultDebounce))
				fire = debounce.C()
			}
		case <-fire:
			fire, due = nil, true
		case <-resync.C():
			due, force = true, true
		}
	}
}

// Cleanup deletes what the add-on wrote; objects of its names that are someone else's stay.
func (AddOn) Cleanup(ctx context.Context, env builtin.Env) error {
	ok, err := served(env.ClusterName, env.Spoke)
	if err != nil || !ok {
		// Without Kueue's API there is nothing of the add-on's left.
		return err
	}
	s, err := newSpoke(env.ClusterName, env.Spoke)
	if err != nil {
		return err
	}
	return s.cleanup(ctx)
}
