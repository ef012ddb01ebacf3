package failover

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/hub/kueue"
)

// ClusterReconciler writes each ManagedCluster's fencing Timing annotation.
type ClusterReconciler struct {
	Client client.Client
	// KueueWorkers counts a cluster the hub made a MultiKueueCluster for as one that runs fenced
	// work (MultiKueue's Jobs are fenced). Set it only when the API server serves Kueue's kinds.
	KueueWorkers bool
}

var _ reconcile.Reconciler = (*ClusterReconciler)(nil)

// SetupWithManager registers the reconciler. Policies and sets are few: a change to one requeues
// every cluster. A ManifestWork requeues its namespace's cluster when it is created or deleted or
// its fenced annotation changes.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allClusters)
	b := ctrl.NewControllerManagedBy(mgr)
	if r.KueueWorkers {
		b = b.Watches(&kueuev1beta2.MultiKueueCluster{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
		}), builder.WithPredicates(predicate.LabelChangedPredicate{}))
	}
	return b.
		Named("failover-timing").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		Watches(&failoverv1alpha1.FailoverPolicy{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1beta2.ManagedClusterSet{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
		}), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return fencing.WorkFenced(e.ObjectOld.GetAnnotations()) != fencing.WorkFenced(e.ObjectNew.GetAnnotations()) ||
					!e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp())
			},
		})).
		Complete(r)
}

func (r *ClusterReconciler) allClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusters to requeue for a failover policy or set change")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: l.Items[i].Name}})
	}
	return reqs
}

// +kubebuilder:rbac:groups=failover.flotilla.io,resources=failoverpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueclusters,verbs=get;list;watch

// kueueWorker says whether the hub made a MultiKueueCluster for the cluster.
func (r *ClusterReconciler) kueueWorker(ctx context.Context, cluster string) (bool, error) {
	if !r.KueueWorkers {
		return false, nil
	}
	mkc := &kueuev1beta2.MultiKueueCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, mkc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return mkc.Labels[kueue.ManagedLabel] == kueue.ManagedValue, nil
}

// Reconcile sets or removes the cluster's Timing annotation.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	policies := &failoverv1alpha1.FailoverPolicyList{}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	works := &workv1.ManifestWorkList{}
	for _, l := range []struct {
		list client.ObjectList
		opts []client.ListOption
	}{{policies, nil}, {sets, nil}, {works, []client.ListOption{client.InNamespace(mc.Name)}}} {
		if err := r.Client.List(ctx, l.list, append(l.opts, client.UnsafeDisableDeepCopy)...); err != nil {
			return reconcile.Result{}, err
		}
	}
	worker, err := r.kueueWorker(ctx, mc.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	t, ok := desiredTiming(mc, policies.Items, sets.Items, works.Items, worker)
	want := ""
	if ok {
		want = t.String()
	}
	have, has := mc.Annotations[fencing.AnnotationTiming]
	if have == want && has == ok {
		return reconcile.Result{}, nil
	}
	patched := mc.DeepCopy()
	if ok {
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		patched.Annotations[fencing.AnnotationTiming] = want
	} else {
		delete(patched.Annotations, fencing.AnnotationTiming)
	}
	if err := r.Client.Patch(ctx, patched, client.MergeFrom(mc)); err != nil {
		return reconcile.Result{}, fmt.Errorf("setting ManagedCluster %s annotation %s: %w", mc.Name, fencing.AnnotationTiming, err)
	}
	return reconcile.Result{}, nil
}
