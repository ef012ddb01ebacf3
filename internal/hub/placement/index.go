package placement

import (
	"context"
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// decisionIndex follows every PlacementDecision through the controller's watch, so that a reconcile reads
// its placement's decisions and the other placements' counts per cluster without walking every
// PlacementDecision of the hub: with 10,000 placements that walk, once per reconcile, would cost
// more than the scheduling. It derives both with scheduler.DecisionInputs, applied to one
// placement's decisions at a time, so it says what DecisionInputs over all of them says (a
// PlacementDecision belongs to the placement its PlacementLabel names in its namespace; a cluster
// in several slices of one placement counts once).
type decisionIndex struct {
	mu sync.RWMutex
	// byPlacement holds each placement's PlacementDecisions by name, as the informer has them
	// (read-only).
	byPlacement map[types.NamespacedName]map[string]*clusterv1beta1.PlacementDecision
	// selected is each placement's clusters, and counts how many placements selected a cluster.
	selected map[types.NamespacedName][]string
	counts   map[string]int
}

func newDecisionIndex() *decisionIndex {
	return &decisionIndex{
		byPlacement: map[types.NamespacedName]map[string]*clusterv1beta1.PlacementDecision{},
		selected:    map[types.NamespacedName][]string{},
		counts:      map[string]int{},
	}
}

// placementOf is the placement a PlacementDecision belongs to, if any.
func placementOf(d *clusterv1beta1.PlacementDecision) (types.NamespacedName, bool) {
	name, ok := d.Labels[clusterv1beta1.PlacementLabel]
	return types.NamespacedName{Namespace: d.Namespace, Name: name}, ok
}

// set records d (nil: deleted) under the placement key k, by the PlacementDecision's name.
func (x *decisionIndex) set(k types.NamespacedName, name string, d *clusterv1beta1.PlacementDecision) {
	m := x.byPlacement[k]
	if d == nil {
		delete(m, name)
	} else {
		if m == nil {
			m = map[string]*clusterv1beta1.PlacementDecision{}
			x.byPlacement[k] = m
		}
		m[name] = d
	}
	for _, c := range x.selected[k] {
		x.counts[c]--
		if x.counts[c] == 0 {
			delete(x.counts, c)
		}
	}
	if len(m) == 0 {
		delete(x.byPlacement, k)
		delete(x.selected, k)
		return
	}
	current, _ := scheduler.DecisionInputs(k.Namespace, k.Name, x.list(k))
	x.selected[k] = current
	for _, c := range current {
		x.counts[c]++
	}
}

func (x *decisionIndex) list(k types.NamespacedName) []clusterv1beta1.PlacementDecision {
	m := x.byPlacement[k]
	out := make([]clusterv1beta1.PlacementDecision, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, *m[name])
	}
	return out
}

func (x *decisionIndex) update(old, cur *clusterv1beta1.PlacementDecision) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old != nil {
		if k, ok := placementOf(old); ok {
			x.set(k, old.Name, nil)
		}
	}
	if cur != nil {
		if k, ok := placementOf(cur); ok {
			x.set(k, cur.Name, cur)
		}
	}
}

// inputs returns placement k's PlacementDecisions (sorted by name; read-only), the clusters they
// hold and, for each cluster, how many OTHER placements selected it: what
// scheduler.DecisionInputs(k.Namespace, k.Name, every PlacementDecision) returns.
func (x *decisionIndex) inputs(k types.NamespacedName) ([]clusterv1beta1.PlacementDecision, []string, map[string]int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	others := maps.Clone(x.counts)
	if others == nil {
		others = map[string]int{}
	}
	current := slices.Clone(x.selected[k])
	for _, c := range current {
		if others[c]--; others[c] == 0 {
			delete(others, c)
		}
	}
	return x.list(k), current, others
}

// eventHandler keeps the index in step with the PlacementDecision informer and then queues
// the placement each PlacementDecision belongs to and the one controlling it (the same, unless
// someone relabeled it), unless the event is the result of the controller's own write.
func (x *decisionIndex) eventHandler(own *ownWrites) handler.EventHandler {
	enqueue := func(q queue, ds ...client.Object) {
		for _, o := range ds {
			d, ok := o.(*clusterv1beta1.PlacementDecision)
			if !ok || d == nil {
				continue
			}
			if k, ok := placementOf(d); ok {
				q.Add(reconcile.Request{NamespacedName: k})
			}
			if ref := metav1.GetControllerOf(d); ref != nil && ref.Kind == "Placement" {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: d.Namespace, Name: ref.Name}})
			}
		}
	}
	as := func(o client.Object) *clusterv1beta1.PlacementDecision {
		d, _ := o.(*clusterv1beta1.PlacementDecision)
		return d
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e eventCreate, q queue) {
			x.update(nil, as(e.Object))
			if d := as(e.Object); d == nil || !own.observed(d, false) {
				enqueue(q, e.Object)
			}
		},
		UpdateFunc: func(_ context.Context, e eventUpdate, q queue) {
			x.update(as(e.ObjectOld), as(e.ObjectNew))
			if d := as(e.ObjectNew); d == nil || !own.observed(d, false) {
				enqueue(q, e.ObjectOld, e.ObjectNew)
			}
		},
		DeleteFunc: func(_ context.Context, e eventDelete, q queue) {
			x.update(as(e.Object), nil)
			if d := as(e.Object); d == nil || !own.observed(d, true) {
				enqueue(q, e.Object)
			}
		},
	}
}
