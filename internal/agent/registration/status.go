package registration

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/core/conditions"
)

// livezTimeout bounds the probe of the spoke's /livez: a spoke that does not answer in time is
// not available.
const livezTimeout = 5 * time.Second

// statusStep reports Joined, Available and the inventory in the ManagedCluster's status once,
// writing only when something changed, so a steady cluster causes no writes. It compares with
// the ManagedCluster the acceptance loop read; when that is stale the write conflicts, and the
// step reads the cluster again and retries at once.
func (a *Agent) statusStep(ctx context.Context) (time.Duration, error) {
	o := a.opts
	cur, mc := a.hub.Current(), a.accepted()
	if cur == nil || mc == nil {
		return o.Poll, nil
	}
	next := leaseInterval(mc.LeaseDuration())
	now := metav1.NewTime(o.Clock.Now())
	available := a.availability(ctx, now)
	inv := a.inventory.Get()
	for attempt := 0; ; attempt++ {
		desired := desiredStatus(mc, available, inv, now)
		if conditions.Equal(mc.Status.Conditions, desired.Status.Conditions) && inventoryEqual(&mc.Status, &desired.Status) {
			return next, nil
		}
		pctx, cancel := context.WithTimeout(ctx, requestTimeout)
		err := cur.Client.Status().Patch(pctx, desired, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{}))
		cancel()
		if err == nil {
			a.shareCluster(desired, false)
			return next, nil
		}
		if !apierrors.IsConflict(err) || attempt > 0 {
			return 0, a.hubErr(cur, "update the status of ManagedCluster "+o.ClusterName, err)
		}
		// The hub changed the cluster since it was read (labels, taints, its own conditions).
		fresh := &clusterv1.ManagedCluster{}
		gctx, cancel := context.WithTimeout(ctx, requestTimeout)
		err = cur.Client.Get(gctx, client.ObjectKey{Name: o.ClusterName}, fresh)
		cancel()
		if err != nil {
			return 0, a.hubErr(cur, "read ManagedCluster "+o.ClusterName, err)
		}
		a.shareCluster(fresh, false)
		if mc = fresh; !mc.Spec.HubAcceptsClient {
			return o.Poll, nil
		}
	}
}

// desiredStatus is mc with the agent's conditions (Joined, and available as Available) and the
// inventory, when there is one; without one the inventory in mc is kept.
func desiredStatus(mc *clusterv1.ManagedCluster, available metav1.Condition, inv *Inventory, now metav1.Time) *clusterv1.ManagedCluster {
	desired := mc.DeepCopy()
	meta.SetStatusCondition(&desired.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
		Message: "the agent holds a hub certificate and renews its lease", LastTransitionTime: now, ObservedGeneration: mc.Generation,
	})
	available.ObservedGeneration = mc.Generation
	meta.SetStatusCondition(&desired.Status.Conditions, available)
	if inv != nil {
		desired.Status.Capacity, desired.Status.Allocatable = inv.Capacity, inv.Allocatable
		desired.Status.Version, desired.Status.ClusterClaims = inv.Version, inv.ClusterClaims
	}
	return desired
}

// availability asks the spoke's /livez, as OCM's agent does.
func (a *Agent) availability(ctx context.Context, now metav1.Time) metav1.Condition {
	cond := metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, LastTransitionTime: now}
	ctx, cancel := context.WithTimeout(ctx, livezTimeout)
	defer cancel()
	if _, err := a.spoke.Discovery().RESTClient().Get().AbsPath("/livez").DoRaw(ctx); err != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, "ManagedClusterKubeAPIServerUnavailable"
		cond.Message = "the spoke's API server does not answer /livez: " + err.Error()
		return cond
	}
	cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "ManagedClusterAvailable", "the spoke's API server is live"
	return cond
}
