package resourceusage

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// Name is the add-on's name.
var Name = builtinaddon.ResourceUsage.Name

// Label marks the ResourceUsage the add-on wrote: it updates and deletes only one that carries it.
const Label = builtinaddon.Label

// Defaults of AddOn's timings.
const (
	// DefaultInterval is how often unchanged figures are written again, to move validUntil on.
	DefaultInterval = 60 * time.Second
	// DefaultDebounce is how long after a change of a node or pod the figures are written: the
	// changes of that time are written together.
	DefaultDebounce = time.Second
)

// AddOn is the resource-usage built-in add-on.
type AddOn struct {
	// Interval is DefaultInterval when zero. Figures are valid for three intervals.
	Interval time.Duration
	// Debounce is DefaultDebounce when zero.
	Debounce time.Duration
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

func (a AddOn) interval() time.Duration { return builtin.OrDefault(a.Interval, DefaultInterval) }
func (a AddOn) debounce() time.Duration { return builtin.OrDefault(a.Debounce, DefaultDebounce) }

// Run watches the spoke's nodes and pods and writes the cluster's ResourceUsage a debounce
// after each change, and every interval.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	cs, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	w := &watcher{tally: newTally(), changed: make(chan struct{}, 1)}
	nodes, pods := w.stores()
	runCtx, stop := context.WithCancel(ctx)
	var reflectors sync.WaitGroup
	// The reflectors stop before Run returns, however it ends.
	defer reflectors.Wait()
	defer stop()
	for _, r := range []struct {
		resource string
		obj      runtime.Object
		store    *tallyStore
	}{{"nodes", &corev1.Node{}, nodes}, {"pods", &corev1.Pod{}, pods}} {
		lw := toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), r.resource, metav1.NamespaceAll, fields.Everything())
		ref := toolscache.NewReflectorWithOptions(lw, r.obj, r.store, toolscache.ReflectorOptions{Name: "resource-usage " + r.resource})
		reflectors.Go(func() { ref.RunWithContext(runCtx) })
	}
	for _, s := range []*tallyStore{nodes, pods} {
		select {
		case <-s.synced:
		case <-ctx.Done():
			return fmt.Errorf("reading the nodes and pods of the cluster: %w", context.Cause(ctx))
		}
	}
	// The first list of a large cluster leaves much garbage, and set the heap's goal while it was
	// held: without a collection now, the process would keep that memory until the (slow)
	// allocations of the watch reach the goal.
	debug.FreeOSMemory()
	p := &publisher{env: env, interval: a.interval()}
	refresh := env.Clock.NewTicker(a.interval())
	defer refresh.Stop()
	var debounce clock.Timer
	var fire <-chan time.Time
	for due := true; ; {
		if due {
			if err := p.publish(ctx, w.figures); err != nil {
				return err
			}
			due = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed:
			if fire == nil {
				debounce = env.Clock.NewTimer(a.debounce())
				fire = debounce.C()
			}
		case <-fire:
			fire, due = nil, true
		case <-refresh.C():
			due = true
		}
	}
}

// watcher keeps the tally from the reflectors' events.
type watcher struct {
	mu    sync.Mutex
	tally *tally
	// changed gets a token after every change; one pending token is enough.
	changed chan struct{}
}

// stores returns the stores the node and pod reflectors fill.
func (w *watcher) stores() (nodes, pods *tallyStore) {
	nodes = newTallyStore(w, trimNode,
		func(t *tally, _ string, obj any) { t.setNode(obj.(*corev1.Node)) },
		func(t *tally, key string) { t.deleteNode(key) },
		func(t *tally) []string { return t.nodeNames() })
	pods = newTallyStore(w, trimPod,
		func(t *tally, key string, obj any) { t.setPod(key, obj.(*podRecord)) },
		func(t *tally, key string) { t.deletePod(key) },
		func(t *tally) []string { return t.podKeys() })
	return nodes, pods
}

func (w *watcher) update(change func(*tally)) {
	w.mu.Lock()
	change(w.tally)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *watcher) figures() (int32, []usagev1alpha1.ResourceFigures) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tally.figures()
}

// objectKey is the namespace/name of an object or of a deleted object's last state.
func objectKey(obj any) string {
	key, _ := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return key
}

// trimNode keeps what the tally reads of a node.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	out := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion},
		Spec:       corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable},
		Status:     corev1.NodeStatus{Capacity: n.Status.Capacity, Allocatable: n.Status.Allocatable},
	}
	for _, label := range usagev1alpha1.ModelLabels {
		if v, ok := n.Labels[label]; ok {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[label] = v
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return out, nil
}

// Cleanup deletes the ResourceUsage the add-on wrote.
func (AddOn) Cleanup(ctx context.Context, env builtin.Env) error {
	u := &usagev1alpha1.ResourceUsage{}
	key := client.ObjectKey{Namespace: env.ClusterName, Name: usagev1alpha1.ResourceUsageName}
	if err := env.Hub.Get(ctx, key, u); err != nil {
		return client.IgnoreNotFound(err)
	}
	if u.Labels[Label] != Name {
		return nil
	}
	uid := u.UID
	return client.IgnoreNotFound(env.Hub.Delete(ctx, u, client.Preconditions{UID: &uid}))
}
