package placement

import (
	"context"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
	hubclusterset "github.com/flotilla/flotilla/internal/hub/clusterset"
)

type (
	eventCreate = event.TypedCreateEvent[client.Object]
	eventUpdate = event.TypedUpdateEvent[client.Object]
	eventDelete = event.TypedDeleteEvent[client.Object]
	queue       = workqueue.TypedRateLimitingInterface[reconcile.Request]
)

// ClusterChanged reports whether an update of a ManagedCluster can change a placement's
// decisions: its labels (set membership, predicates, groups), claims, taints, allocatable
// resources or deletion. Agents rewrite the rest of the status (conditions, versions) often.
func ClusterChanged(o, n *clusterv1.ManagedCluster) bool {
	fields, everyone := ChangedFields(o, n)
	return fields != 0 || everyone
}

// ChangedFields says which fields that placements may read (scheduler.FieldsRead) differ between
// o and n, and whether the change concerns every placement that can see the cluster: its taints
// or its deletion.
func ChangedFields(o, n *clusterv1.ManagedCluster) (fields scheduler.ClusterFields, everyone bool) {
	if !reflect.DeepEqual(o.Labels, n.Labels) {
		fields |= scheduler.FieldLabels
	}
	if !reflect.DeepEqual(o.Status.ClusterClaims, n.Status.ClusterClaims) {
		fields |= scheduler.FieldClaims
	}
	if !reflect.DeepEqual(o.Status.Allocatable, n.Status.Allocatable) {
		fields |= scheduler.FieldAllocatable
	}
	everyone = !reflect.DeepEqual(o.Spec.Taints, n.Spec.Taints) || o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero()
	return fields, everyone
}

// SetsOfClusters returns the names of the sets that hold any of clusters, by the sets' selectors
// (internal/hub/clusterset, the rule the scheduler applies), and the set each cluster's
// ExclusiveClusterSetLabel names, which may not be in sets yet.
func SetsOfClusters(clusters []*clusterv1.ManagedCluster, clusterSets []clusterv1beta2.ManagedClusterSet) []string {
	names := sets.New[string]()
	for _, c := range clusters {
		names.Insert(hubclusterset.SetsOf(c, clusterSets)...)
		if s := c.Labels[clusterv1beta2.ClusterSetLabel]; s != "" {
			names.Insert(s)
		}
	}
	return sets.List(names)
}

// PlacementsForSets returns the placements that may use any of the sets: those in a namespace
// with a binding named after one of them (the binding's name is the set it binds, as the
// scheduler reads it), and that either name no spec.clusterSets or name that set; and, when
// keep is not nil, for which keep is true.
func PlacementsForSets(setNames []string, bindings []clusterv1beta2.ManagedClusterSetBinding, placements []clusterv1beta1.Placement,
	keep func(*clusterv1beta1.Placement) bool) []reconcile.Request {
	changed := sets.New(setNames...)
	bound := map[string][]string{} // namespace -> changed sets bound there
	for _, b := range bindings {
		if changed.Has(b.Name) {
			bound[b.Namespace] = append(bound[b.Namespace], b.Name)
		}
	}
	var out []reconcile.Request
	for _, p := range placements {
		names, ok := bound[p.Namespace]
		if !ok {
			continue
		}
		if keep != nil && !keep(&p) {
			continue
		}
		if len(p.Spec.ClusterSets) == 0 || slices.ContainsFunc(names, func(s string) bool { return slices.Contains(p.Spec.ClusterSets, s) }) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
		}
	}
	return out
}

// PlacementsInNamespace returns every placement in ns.
func PlacementsInNamespace(ns string, placements []clusterv1beta1.Placement) []reconcile.Request {
	var out []reconcile.Request
	for _, p := range placements {
		if p.Namespace == ns {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
		}
	}
	return out
}

// forClusters maps clusters (created, deleted, or scored) to the placements that may see them.
func (r *Reconciler) forClusters(ctx context.Context, clusters ...*clusterv1.ManagedCluster) []reconcile.Request {
	cs := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, cs, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterSets to requeue placements for a cluster change")
		return nil
	}
	return r.forSets(ctx, SetsOfClusters(clusters, cs.Items), nil)
}

// forClusterUpdate maps an update of a cluster to the placements it may concern: every placement
// that can see the cluster when its taints or deletion changed; otherwise those of the sets the
// cluster joined or left, and those of its other sets that read a field that changed
// (scheduler.FieldsRead). A label that only Balance-scored placements never look at then
// reschedules none of them.
func (r *Reconciler) forClusterUpdate(ctx context.Context, o, n *clusterv1.ManagedCluster) []reconcile.Request {
	fields, everyone := ChangedFields(o, n)
	if everyone {
		return r.forClusters(ctx, o, n)
	}
	cs := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, cs, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterSets to requeue placements for a cluster change")
		return nil
	}
	before, after := sets.New(SetsOfClusters([]*clusterv1.ManagedCluster{o}, cs.Items)...), sets.New(SetsOfClusters([]*clusterv1.ManagedCluster{n}, cs.Items)...)
	moved := before.SymmetricDifference(after)
	out := r.forSets(ctx, sets.List(moved), nil)
	if fields != 0 {
		out = append(out, r.forSets(ctx, sets.List(before.Intersection(after)), func(p *clusterv1beta1.Placement) bool {
			return scheduler.FieldsRead(p)&fields != 0
		})...)
	}
	return out
}

func (r *Reconciler) forSets(ctx context.Context, setNames []string, keep func(*clusterv1beta1.Placement) bool) []reconcile.Request {
	if len(setNames) == 0 {
		return nil
	}
	bs := &clusterv1beta2.ManagedClusterSetBindingList{}
	ps := &clusterv1beta1.PlacementList{}
	for _, l := range []client.ObjectList{bs, ps} {
		if err := r.Client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing to requeue placements for a cluster set change", "sets", setNames)
			return nil
		}
	}
	return PlacementsForSets(setNames, bs.Items, ps.Items, keep)
}

// forNamespace maps a binding to the placements of its namespace.
func (r *Reconciler) forNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	ps := &clusterv1beta1.PlacementList{}
	if err := r.Client.List(ctx, ps, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing placements to requeue for a binding change", "namespace", o.GetNamespace())
		return nil
	}
	return PlacementsInNamespace(o.GetNamespace(), ps.Items)
}

// forScore maps an AddOnPlacementScore, which lives in its cluster's namespace, like its cluster.
func (r *Reconciler) forScore(ctx context.Context, o client.Object) []reconcile.Request {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: o.GetNamespace()}, mc); err != nil {
		return nil // no such cluster: no placement can use the score
	}
	return r.forClusters(ctx, mc)
}

// forUsage maps a cluster's ResourceUsage, which lives in its namespace, to the placements that
// can see the cluster and read ResourceUsages (scheduler.FieldResourceUsage: the GPU annotation,
// the GPU prioritizers or the CEL GPU functions); the agent refreshes it often, and the other
// placements cannot change with it.
func (r *Reconciler) forUsage(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetName() != usagev1alpha1.ResourceUsageName {
		return nil // the scheduler reads only the one of that name
	}
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: o.GetNamespace()}, mc); err != nil {
		return nil // no such cluster: no placement can use its figures
	}
	cs := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, cs, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterSets to requeue placements for a ResourceUsage change")
		return nil
	}
	return r.forSets(ctx, SetsOfClusters([]*clusterv1.ManagedCluster{mc}, cs.Items), ReadsResourceUsage)
}

// ReadsResourceUsage reports whether the placement's decisions may depend on ResourceUsages.
func ReadsResourceUsage(p *clusterv1beta1.Placement) bool {
	return scheduler.FieldsRead(p)&scheduler.FieldResourceUsage != 0
}

// fleetHandler handles the events of a kind the scheduler reads (clusters, sets, bindings,
// scores): each marks the fleet snapshot stale, then queues the placements that toPlacements
// (for a create or a delete) or onUpdate (nil: toPlacements of the new object) maps it to. The
// initial list at start queues nothing: every placement is scheduled then anyway, and mapping
// each of 10,000 clusters to the placements that see it would cost more than that.
func (r *Reconciler) fleetHandler(toPlacements func(context.Context, client.Object) []reconcile.Request,
	onUpdate func(ctx context.Context, o, n client.Object) []reconcile.Request) handler.Funcs {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e eventCreate, q queue) {
			r.fleet.invalidate()
			if !e.IsInInitialList {
				r.enqueue(ctx, q, toPlacements(ctx, e.Object))
			}
		},
		UpdateFunc: func(ctx context.Context, e eventUpdate, q queue) {
			r.fleet.invalidate()
			if onUpdate != nil {
				r.enqueue(ctx, q, onUpdate(ctx, e.ObjectOld, e.ObjectNew))
			} else {
				r.enqueue(ctx, q, toPlacements(ctx, e.ObjectNew))
			}
		},
		DeleteFunc: func(ctx context.Context, e eventDelete, q queue) {
			r.fleet.invalidate()
			r.enqueue(ctx, q, toPlacements(ctx, e.Object))
		},
	}
}

func (r *Reconciler) enqueue(_ context.Context, q queue, reqs []reconcile.Request) {
	for _, req := range reqs {
		q.Add(req)
	}
}
