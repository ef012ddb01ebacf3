package clusterset

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/core/conditions"
)

// Reasons of the ClusterSetEmpty condition. The first two are OCM's.
const (
	ReasonClustersSelected       = "ClustersSelected"
	ReasonNoClusterMatched       = "NoClusterMatched"
	ReasonInvalidClusterSelector = "InvalidClusterSelector"
)

// SetReconciler reports in each ManagedClusterSet's ClusterSetEmpty condition how many clusters
// belong to it.
type SetReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
	// Coalesce is how long a cluster's label change waits before its sets are counted again, so
	// that the changes of that time are counted once (default CoalesceClusterChanges). Counting
	// lists every member: at each of 10,000 clusters joining one by one, it was 45% of the hub's
	// CPU while they registered, and a status write each.
	Coalesce time.Duration
}

// CoalesceClusterChanges is SetReconciler.Coalesce's default: a set's count is at most this far
// behind its clusters' labels.
const CoalesceClusterChanges = time.Second

var _ reconcile.Reconciler = (*SetReconciler)(nil)

// SetupWithManager registers the reconciler.
func (r *SetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedclusterset").
		// Our own status writes do not change the generation, so they do not come back here.
		For(&clusterv1beta2.ManagedClusterSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Only labels decide membership; agents update cluster status every few seconds. The
		// changes of one Coalesce are counted once.
		Watches(&clusterv1.ManagedCluster{}, coalesced(r.setsOfCluster, r.coalesce()),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(r)
}

func (r *SetReconciler) coalesce() time.Duration {
	if r.Coalesce > 0 {
		return r.Coalesce
	}
	return CoalesceClusterChanges
}

// coalesced is handler.EnqueueRequestsFromMapFunc whose requests wait d in the queue: a request
// already waiting keeps its time, so every event of those d becomes one reconcile.
func coalesced(fn handler.MapFunc, d time.Duration) handler.EventHandler {
	add := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range fn(ctx, o) {
			q.AddAfter(req, d)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		// Both the old and the new object: the set a cluster leaves is counted as well as the one
		// it joins.
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.ObjectOld, q)
			add(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
	}
}

// setsOfCluster maps a cluster to the sets it belongs to. Updates are mapped for both the old and
// the new object, so the set a cluster leaves is requeued as well as the set it joins.
func (r *SetReconciler) setsOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	mc, ok := obj.(*clusterv1.ManagedCluster)
	if !ok {
		return nil
	}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterSets to requeue for a cluster change", "cluster", mc.Name)
		return nil
	}
	names := SetsOf(mc, sets.Items)
	// The set named by the label may not be in the cache yet; requeuing it costs nothing.
	if name := mc.Labels[clusterv1beta2.ClusterSetLabel]; name != "" {
		names = append(names, name)
	}
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
	}
	return reqs
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch

// Reconcile counts a set's members and says whether it is empty.
func (r *SetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	members := 0
	sel, selErr := Selector(set)
	if selErr == nil {
		clusters := &clusterv1.ManagedClusterList{}
		// Read-only use of the cache's objects: no copy of every member.
		if err := r.Client.List(ctx, clusters, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
			return reconcile.Result{}, err
		}
		members = len(clusters.Items)
	}
	// An invalid selector is the user's to fix; the edit requeues the set, retrying would not help.
	return reconcile.Result{}, r.updateStatus(ctx, set, emptyCondition(set, members, selErr))
}

func (r *SetReconciler) updateStatus(ctx context.Context, set *clusterv1beta2.ManagedClusterSet, c metav1.Condition) error {
	desired := set.DeepCopy()
	c.LastTransitionTime = metav1.NewTime(r.Clock.Now()) // kept by SetStatusCondition unless the status changes
	meta.SetStatusCondition(&desired.Status.Conditions, c)
	if conditions.Equal(set.Status.Conditions, desired.Status.Conditions) {
		return nil
	}
	return r.Client.Status().Patch(ctx, desired, client.MergeFrom(set))
}

// emptyCondition is the ClusterSetEmpty condition of a set with the given number of members, or
// whose selector could not be read (selErr).
func emptyCondition(set *clusterv1beta2.ManagedClusterSet, members int, selErr error) metav1.Condition {
	c := metav1.Condition{Type: clusterv1beta2.ManagedClusterSetConditionEmpty, ObservedGeneration: set.Generation}
	switch {
	case selErr != nil:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonInvalidClusterSelector
		c.Message = selErr.Error() + "; fix spec.clusterSelector"
	case members == 1:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonClustersSelected, "1 ManagedCluster selected"
	case members > 1:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonClustersSelected, fmt.Sprintf("%d ManagedClusters selected", members)
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonNoClusterMatched, "no ManagedCluster selected: "+emptyHint(set)
	}
	return c
}

// emptyHint says how clusters would join an empty set.
func emptyHint(set *clusterv1beta2.ManagedClusterSet) string {
	ls := set.Spec.ClusterSelector.LabelSelector
	switch {
	case set.Spec.ClusterSelector.SelectorType != clusterv1beta2.LabelSelector:
		return fmt.Sprintf("label a cluster %s=%s to add it", clusterv1beta2.ClusterSetLabel, set.Name)
	case ls == nil:
		return "spec.clusterSelector.labelSelector is not set; set it to select clusters"
	case len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0:
		return "the set selects every cluster and the hub has none"
	default:
		return fmt.Sprintf("no cluster has labels matching spec.clusterSelector.labelSelector %s", metav1.FormatLabelSelector(ls))
	}
}
