package lease

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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
	"github.com/flotilla/flotilla/internal/core/conditions"
)

// Reconciler sets an accepted cluster's Available condition to Unknown when its agent stops
// renewing the cluster's lease.
type Reconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
	// APIReader reads the lease past the cache before the cluster is marked Unknown, so that a
	// Lease event still in flight cannot make a live cluster flap. SetupWithManager fills it from
	// the manager when nil; without one the cached client is used.
	APIReader client.Reader
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the reconciler. A Lease named managed-cluster-lease maps to the
// ManagedCluster named after its namespace.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-lease").
		For(&clusterv1.ManagedCluster{}).
		Watches(&coordinationv1.Lease{},
			handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
			}),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetName() == clusterv1.ManagedClusterLeaseName
			}))).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=update;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch

// Reconcile marks the cluster Unknown if its lease expired, and otherwise asks to be called again
// when it would.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.Spec.HubAcceptsClient || !mc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	key := client.ObjectKey{Namespace: mc.Name, Name: clusterv1.ManagedClusterLeaseName}
	lease := &coordinationv1.Lease{}
	if err := r.Client.Get(ctx, key, lease); err != nil {
		// The registration controller creates the lease on acceptance; its creation is an event.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	desired, requeueAfter := desiredConditions(mc, lease, r.Clock.Now())
	if conditions.Equal(mc.Status.Conditions, desired) {
		return reconcile.Result{RequeueAfter: requeueAfter}, nil
	}
	if r.APIReader != nil {
		if err := r.APIReader.Get(ctx, key, lease); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		desired, requeueAfter = desiredConditions(mc, lease, r.Clock.Now())
		if conditions.Equal(mc.Status.Conditions, desired) {
			return reconcile.Result{RequeueAfter: requeueAfter}, nil
		}
	}
	if err := r.raiseEpoch(ctx, mc, lease, desired); err != nil {
		return reconcile.Result{}, err
	}
	patched := mc.DeepCopy()
	patched.Status.Conditions = desired
	// Conditions are one JSON list in a merge patch: the lock keeps a stale copy from
	// overwriting what the agent just reported.
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, fmt.Errorf("setting ManagedCluster %s condition %s to Unknown: %w", mc.Name, clusterv1.ManagedClusterConditionAvailable, err)
	}
	return reconcile.Result{RequeueAfter: requeueAfter}, nil
}

// leaseConditions returns mc's conditions as they should be at now given its lease, and how
// long until they would next change (zero once the lease has expired: only a renewal, which is an
// event, changes anything then).
func leaseConditions(mc *clusterv1.ManagedCluster, lease *coordinationv1.Lease, now time.Time) ([]metav1.Condition, time.Duration) {
	expiry, message := ocmExpiry(mc, lease)
	if t, ok := fencedTiming(mc, lease); ok {
		expiry, message = lostExpiry(lease, t)
	}
	if now.Before(expiry) {
		return mc.Status.Conditions, expiry.Sub(now)
	}
	desired := append([]metav1.Condition(nil), mc.Status.Conditions...)
	meta.SetStatusCondition(&desired, metav1.Condition{
		Type:               clusterv1.ManagedClusterConditionAvailable,
		Status:             metav1.ConditionUnknown,
		Reason:             clusterv1.ManagedClusterReasonLeaseUpdateStopped,
		Message:            message,
		ObservedGeneration: mc.Generation,
		LastTransitionTime: metav1.NewTime(now), // kept by SetStatusCondition unless the status changes
	})
	return desired, 0
}

// ocmExpiry is OCM's rule: the cluster is Unknown LeaseGraceFactor lease periods after the last
// renewal; and the message that says so.
func ocmExpiry(mc *clusterv1.ManagedCluster, lease *coordinationv1.Lease) (time.Time, string) {
	period := mc.LeaseDuration()
	// The agent records in the Lease the period it renews at. Right after an administrator
	// shortens the cluster's period the agent still renews at the old one until it reads the
	// cluster again: its last renewal is judged by the longer of the two, so that shortening the
	// period does not declare a healthy cluster lost.
	if d := lease.Spec.LeaseDurationSeconds; d != nil && time.Duration(*d)*time.Second > period {
		period = time.Duration(*d) * time.Second
	}
	renewed := renewTime(lease)
	return renewed.Add(clusterv1.LeaseGraceFactor * period), fmt.Sprintf("the cluster's agent stopped renewing its lease: Lease %s/%s was last renewed at %s, more than %d x %ds ago",
		lease.Namespace, lease.Name, renewed.UTC().Format(time.RFC3339), clusterv1.LeaseGraceFactor, int(period.Seconds()))
}

// clockSkewTolerance is how far ahead of the hub's clock an agent's renewal time may be before
// the hub says the clocks are out of sync.
const clockSkewTolerance = 5 * time.Second

// desiredConditions are leaseConditions plus ManagedClusterConditionClockSynced while the lease
// is fresh. The agent stamps renewals with its own clock, so a renewal time in the hub's future
// shows an agent clock running ahead; a clock running behind shows as an expired lease instead,
// and then nothing can be said about the clocks, so the condition is left as it was.
func desiredConditions(mc *clusterv1.ManagedCluster, lease *coordinationv1.Lease, now time.Time) ([]metav1.Condition, time.Duration) {
	desired, requeueAfter := leaseConditions(mc, lease, now)
	if requeueAfter == 0 {
		return desired, 0
	}
	cond := metav1.Condition{
		Type: clusterv1.ManagedClusterConditionClockSynced, Status: metav1.ConditionTrue,
		Reason: "ManagedClusterClockSynced", Message: "the agent's clock agrees with the hub's",
		ObservedGeneration: mc.Generation, LastTransitionTime: metav1.NewTime(now),
	}
	if ahead := renewTime(lease).Sub(now); ahead > clockSkewTolerance {
		cond.Status, cond.Reason = metav1.ConditionFalse, "ManagedClusterClockOutOfSync"
		cond.Message = fmt.Sprintf("the agent renewed its lease at %s by its clock, %s ahead of the hub's: synchronize the cluster's clock (NTP)",
			renewTime(lease).UTC().Format(time.RFC3339), ahead.Round(time.Second))
	}
	desired = append([]metav1.Condition(nil), desired...)
	meta.SetStatusCondition(&desired, cond)
	return desired, requeueAfter
}

// renewTime is when the lease was last renewed; a lease never renewed counts from its creation.
func renewTime(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime != nil {
		return l.Spec.RenewTime.Time
	}
	return l.CreationTimestamp.Time
}
