package lease

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// TaintReconciler keeps the unreachable and unavailable taints of every ManagedCluster in step
// with its Available condition.
type TaintReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

var _ reconcile.Reconciler = (*TaintReconciler)(nil)

// SetupWithManager registers the reconciler.
func (r *TaintReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-taint").
		For(&clusterv1.ManagedCluster{}).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;update;patch

// Reconcile writes the cluster's taints when the hub-owned ones do not match its Available
// condition.
func (r *TaintReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	desired := desiredTaints(mc.Spec.Taints, mc.Status.Conditions, r.Clock.Now())
	if equality.Semantic.DeepEqual(mc.Spec.Taints, desired) {
		return reconcile.Result{}, nil
	}
	patched := mc.DeepCopy()
	patched.Spec.Taints = desired
	// Taints are one JSON list in a merge patch: the lock keeps a stale copy from dropping a
	// taint someone else just added.
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, fmt.Errorf("updating ManagedCluster %s spec.taints: %w", mc.Name, err)
	}
	return reconcile.Result{}, nil
}

// desiredTaints returns taints with the hub-owned taints set as the Available condition in conds
// asks: unreachable (NoSelect) when it is Unknown or missing, unavailable (NoSelect) when False,
// neither when True. Other taints keep their place. A hub-owned taint already present with effect
// NoSelect is kept as it is, so its timeAdded stays; a new one is added at the end with timeAdded
// now.
func desiredTaints(taints []clusterv1.Taint, conds []metav1.Condition, now time.Time) []clusterv1.Taint {
	want := map[string]bool{}
	switch c := meta.FindStatusCondition(conds, clusterv1.ManagedClusterConditionAvailable); {
	case c == nil || c.Status == metav1.ConditionUnknown:
		want[clusterv1.ManagedClusterTaintUnreachable] = true
	case c.Status == metav1.ConditionFalse:
		want[clusterv1.ManagedClusterTaintUnavailable] = true
	}
	var out []clusterv1.Taint
	have := map[string]bool{}
	for _, t := range taints {
		switch t.Key {
		case clusterv1.ManagedClusterTaintUnreachable, clusterv1.ManagedClusterTaintUnavailable:
			// Keep one well-formed copy of a wanted taint; drop the rest.
			if !want[t.Key] || have[t.Key] || t.Effect != clusterv1.TaintEffectNoSelect {
				continue
			}
			have[t.Key] = true
			if t.TimeAdded == nil {
				t.TimeAdded = timeAdded(now)
			}
		}
		out = append(out, t)
	}
	for _, key := range []string{clusterv1.ManagedClusterTaintUnreachable, clusterv1.ManagedClusterTaintUnavailable} {
		if want[key] && !have[key] {
			out = append(out, clusterv1.Taint{Key: key, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: timeAdded(now)})
		}
	}
	return out
}

// timeAdded is now at the second precision the API server stores, so that the taint written
// compares equal to the taint read back.
func timeAdded(now time.Time) *metav1.Time {
	t := metav1.NewTime(now).Rfc3339Copy()
	return &t
}
