package lease

import (
	"context"
	"fmt"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// fencedTiming is the cluster's fencing Timing (internal/hub/failover writes it) once its agent
// renews at the Timing's period: until the agent has read the Timing it may renew at the
// cluster's longer period, and judging it by the Timing's LostAfter would declare a healthy
// cluster lost. The agent records the period it renews at in the Lease.
func fencedTiming(mc *clusterv1.ManagedCluster, lease *coordinationv1.Lease) (fencing.Timing, bool) {
	t, ok, _ := fencing.OfCluster(mc.Annotations)
	if !ok {
		return fencing.Timing{}, false
	}
	d := lease.Spec.LeaseDurationSeconds
	if d == nil || time.Duration(*d)*time.Second > t.Lease {
		return fencing.Timing{}, false
	}
	return t, true
}

// lostExpiry is when a fenced cluster is declared lost, LostAfter after the last renewal, when
// its agent has stopped its fenced workloads; and the message that says so.
func lostExpiry(lease *coordinationv1.Lease, t fencing.Timing) (time.Time, string) {
	renewed := renewTime(lease)
	return renewed.Add(t.LostAfter), fmt.Sprintf("the cluster is declared lost: Lease %s/%s was last renewed at %s, more than %s ago (annotation %s: %s); its agent stopped its fenced workloads after %s, and they may start elsewhere now",
		lease.Namespace, lease.Name, renewed.UTC().Format(time.RFC3339), t.LostAfter, fencing.AnnotationTiming, t, t.FenceAfter)
}

// raiseEpoch adds one to the cluster's fencing epoch when desired declares a fenced cluster lost
// that was not: before the status write, so that no one can see the cluster lost under the old
// epoch, and an agent coming back knows its fenced workloads may run elsewhere.
func (r *Reconciler) raiseEpoch(ctx context.Context, mc *clusterv1.ManagedCluster, lease *coordinationv1.Lease, desired []metav1.Condition) error {
	if _, ok := fencedTiming(mc, lease); !ok {
		return nil
	}
	was := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	now := meta.FindStatusCondition(desired, clusterv1.ManagedClusterConditionAvailable)
	if now == nil || now.Status != metav1.ConditionUnknown || (was != nil && was.Status == metav1.ConditionUnknown) {
		return nil
	}
	// Raised already for this outage, and the status write after it failed: raise it once only.
	if at, ok := fencing.LostAt(mc.Annotations); ok && at.After(renewTime(lease)) {
		return nil
	}
	patched := mc.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Annotations[fencing.AnnotationEpoch] = strconv.FormatInt(fencing.Epoch(mc.Annotations)+1, 10)
	patched.Annotations[fencing.AnnotationLostAt] = now.LastTransitionTime.UTC().Format(time.RFC3339)
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("raising ManagedCluster %s annotation %s: %w", mc.Name, fencing.AnnotationEpoch, err)
	}
	// The status write below must not undo the metadata write: carry the new resourceVersion.
	mc.ResourceVersion = patched.ResourceVersion
	mc.Annotations = patched.Annotations
	return nil
}
