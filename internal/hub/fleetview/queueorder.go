package fleetview

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// QueueOrderComputed says how `flotilla explain workload` computes a workload's place in its
// ClusterQueue: Kueue's visibility API (visibility.kueue.x-k8s.io) is not served on every hub,
// so it orders the hub's Workloads itself, as Kueue v0.17.0 orders a ClusterQueue's heap with its
// default configuration (pkg/cache/queue/cluster_queue.go baseCompareFunc,
// pkg/workload/workload.go Ordering.GetQueueOrderTimestamp).
const QueueOrderComputed = "computed from the hub's Workloads as Kueue orders a ClusterQueue: priority (highest first), " +
	"then the queue-order time (creation, or the eviction by an admission check or a PodsReady timeout), then UID; " +
	"not read from Kueue's visibility API, which may differ with fair sharing or a workload Kueue holds as inadmissible"

// QueueOrderTime is when the workload joined its ClusterQueue's order, as Kueue v0.17.0 reckons
// it with its default configuration (waitForPodsReady.requeuingStrategy.timestamp Eviction, the
// PrioritySortingWithinCohort feature on): the time of its eviction by a PodsReady timeout or by an
// admission check (a worker lost, for one), else its creation.
func QueueOrderTime(wl *kueuev1beta2.Workload) time.Time {
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue &&
		(c.Reason == kueuev1beta2.WorkloadEvictedByPodsReadyTimeout || c.Reason == kueuev1beta2.WorkloadEvictedByAdmissionCheck) {
		return c.LastTransitionTime.Time
	}
	return wl.CreationTimestamp.Time
}

// Priority is the workload's priority as Kueue orders it: spec.priority, 0 when unset (Kueue's
// priority boost annotation is an alpha feature, off by default, and not counted).
func Priority(wl *kueuev1beta2.Workload) int32 {
	if wl.Spec.Priority != nil {
		return *wl.Spec.Priority
	}
	return 0
}

// CompareQueueOrder orders two workloads of one ClusterQueue as Kueue does: higher priority
// first, then the earlier queue-order time, then the smaller UID.
func CompareQueueOrder(a, b *kueuev1beta2.Workload) int {
	return cmp.Or(
		cmp.Compare(Priority(b), Priority(a)),
		QueueOrderTime(a).Compare(QueueOrderTime(b)),
		cmp.Compare(a.UID, b.UID))
}

// PendingInQueue says whether the workload waits in its ClusterQueue's order: it holds no quota,
// has not finished, is active and not being deleted.
func PendingInQueue(wl *kueuev1beta2.Workload) bool {
	return !meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved) &&
		!meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadFinished) &&
		(wl.Spec.Active == nil || *wl.Spec.Active) && wl.DeletionTimestamp.IsZero()
}

// ClusterQueueOf names the ClusterQueue of a workload: the one it holds quota in, else the one its
// LocalQueue points to (localQueues maps NAMESPACE/NAME to it), else "".
func ClusterQueueOf(wl *kueuev1beta2.Workload, localQueues map[string]string) string {
	if wl.Status.Admission != nil && wl.Status.Admission.ClusterQueue != "" {
		return string(wl.Status.Admission.ClusterQueue)
	}
	return localQueues[wl.Namespace+"/"+string(wl.Spec.QueueName)]
}

// PendingOrder is the pending workloads (PendingInQueue) of ClusterQueue cq among wls, in Kueue's
// order.
func PendingOrder(wls []kueuev1beta2.Workload, localQueues map[string]string, cq string) []*kueuev1beta2.Workload {
	var out []*kueuev1beta2.Workload
	for i := range wls {
		if wl := &wls[i]; PendingInQueue(wl) && ClusterQueueOf(wl, localQueues) == cq {
			out = append(out, wl)
		}
	}
	slices.SortFunc(out, CompareQueueOrder)
	return out
}
