package clusterset

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/core/conditions"
)

// Reasons of the Bound condition (OCM's values).
const (
	ReasonClusterSetBound    = "ClusterSetBound"
	ReasonClusterSetNotFound = "ClusterSetNotFound"
)

// BindingClusterSetIndex indexes ManagedClusterSetBindings in the manager's cache by
// spec.clusterSet. BindingReconciler registers it; other controllers of the same manager may
// list with client.MatchingFields{BindingClusterSetIndex: set}.
const BindingClusterSetIndex = "spec.clusterSet"

// BindingReconciler reports in each ManagedClusterSetBinding's Bound condition whether the set it
// names exists.
type BindingReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

var _ reconcile.Reconciler = (*BindingReconciler)(nil)

// SetupWithManager registers the index and the reconciler.
func (r *BindingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &clusterv1beta2.ManagedClusterSetBinding{}, BindingClusterSetIndex,
		func(o client.Object) []string {
			return []string{o.(*clusterv1beta2.ManagedClusterSetBinding).Spec.ClusterSet}
		}); err != nil {
		return fmt.Errorf("indexing ManagedClusterSetBindings by %s: %w", BindingClusterSetIndex, err)
	}
	// A binding depends only on whether its set exists: set status and spec updates do not matter.
	setExistence := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedclustersetbinding").
		For(&clusterv1beta2.ManagedClusterSetBinding{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOfSet),
			builder.WithPredicates(setExistence)).
		Complete(r)
}

// bindingsOfSet maps a set to the bindings, in any namespace, that name it.
func (r *BindingReconciler) bindingsOfSet(ctx context.Context, obj client.Object) []reconcile.Request {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.MatchingFields{BindingClusterSetIndex: obj.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterSetBindings to requeue for a set change", "set", obj.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(bindings.Items))
	for i := range bindings.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&bindings.Items[i])})
	}
	return reqs
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=get;list;watch

// Reconcile says whether a binding's set exists.
func (r *BindingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	b := &clusterv1beta2.ManagedClusterSetBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: b.Spec.ClusterSet}, set); apierrors.IsNotFound(err) {
		set = nil
	} else if err != nil {
		return reconcile.Result{}, err
	}
	desired := b.DeepCopy()
	c := boundCondition(b, set)
	c.LastTransitionTime = metav1.NewTime(r.Clock.Now()) // kept by SetStatusCondition unless the status changes
	meta.SetStatusCondition(&desired.Status.Conditions, c)
	if conditions.Equal(b.Status.Conditions, desired.Status.Conditions) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.Client.Status().Patch(ctx, desired, client.MergeFrom(b))
}

// boundCondition is the Bound condition of binding b, given its set (nil when it does not exist).
func boundCondition(b *clusterv1beta2.ManagedClusterSetBinding, set *clusterv1beta2.ManagedClusterSet) metav1.Condition {
	c := metav1.Condition{Type: clusterv1beta2.ClusterSetBindingBoundType, ObservedGeneration: b.Generation}
	switch {
	case set == nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonClusterSetNotFound
		c.Message = fmt.Sprintf("ManagedClusterSet %s does not exist: create it to bind it to namespace %s, or delete this binding",
			b.Spec.ClusterSet, b.Namespace)
	case !set.DeletionTimestamp.IsZero():
		c.Status, c.Reason = metav1.ConditionFalse, ReasonClusterSetNotFound
		c.Message = fmt.Sprintf("ManagedClusterSet %s is being deleted: recreate it once it is gone to bind it to namespace %s, or delete this binding",
			b.Spec.ClusterSet, b.Namespace)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonClusterSetBound
		c.Message = fmt.Sprintf("ManagedClusterSet %s is bound to namespace %s", b.Spec.ClusterSet, b.Namespace)
	}
	return c
}
