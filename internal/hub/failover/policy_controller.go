package failover

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
)

// ConditionApplied is the FailoverPolicy condition that says whether its set exists and its
// durations keep the rules (a policy stored before the API server checked one does not).
const ConditionApplied = "Applied"

// PolicyReconciler reports on each FailoverPolicy the clusters it applies to.
type PolicyReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

var _ reconcile.Reconciler = (*PolicyReconciler)(nil)

// SetupWithManager registers the reconciler.
func (r *PolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	return ctrl.NewControllerManagedBy(mgr).
		Named("failoverpolicy").
		For(&failoverv1alpha1.FailoverPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1beta2.ManagedClusterSet{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1.ManagedCluster{}, all, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(r)
}

func (r *PolicyReconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &failoverv1alpha1.FailoverPolicyList{}
	if err := r.Client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing FailoverPolicies to requeue")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: l.Items[i].Name}})
	}
	return reqs
}

// +kubebuilder:rbac:groups=failover.flotilla.io,resources=failoverpolicies/status,verbs=update;patch

// Reconcile counts the policy's clusters and says whether its set exists.
func (r *PolicyReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &failoverv1alpha1.FailoverPolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	status := p.Status.DeepCopy()
	cond := metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionTrue, Reason: "SetFound",
		ObservedGeneration: p.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now())}
	set := &clusterv1beta2.ManagedClusterSet{}
	// A policy stored before the API server had a rule: the hub ignores it (desiredTiming).
	invalid := fencing.FromSpec(p.Spec).Validate()
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: p.Spec.ClusterSet}, set); {
	case invalid != nil:
		status.Clusters = 0
		cond.Status, cond.Reason = metav1.ConditionFalse, "InvalidTiming"
		cond.Message = fmt.Sprintf("spec: %v; the hub applies this policy to no cluster: change its durations so that the API server takes them", invalid)
	case err == nil:
		clusters := &clusterv1.ManagedClusterList{}
		if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
			return reconcile.Result{}, err
		}
		members, err := clusterset.Members(set, clusters.Items)
		if err != nil {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "InvalidSet", err.Error()
			break
		}
		status.Clusters = int32(len(members))
		cond.Message = fmt.Sprintf("applies to the %d clusters of ManagedClusterSet %s", len(members), set.Name)
	case client.IgnoreNotFound(err) == nil:
		status.Clusters = 0
		cond.Status, cond.Reason = metav1.ConditionFalse, "SetNotFound"
		cond.Message = fmt.Sprintf("spec.clusterSet: ManagedClusterSet %s does not exist: create it, or name an existing set", p.Spec.ClusterSet)
	default:
		return reconcile.Result{}, err
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	if equality.Semantic.DeepEqual(&p.Status, status) {
		return reconcile.Result{}, nil
	}
	patched := p.DeepCopy()
	patched.Status = *status
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFrom(p)); err != nil {
		return reconcile.Result{}, fmt.Errorf("updating FailoverPolicy %s status: %w", p.Name, err)
	}
	return reconcile.Result{}, nil
}
