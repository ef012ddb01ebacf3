package fleetview

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Place is a pending workload's place in its ClusterQueue: Position of Pending, from 1, and who
// is ahead of it.
type Place struct {
	Position int `json:"position"`
	Pending  int `json:"pending"`
	// First are up to MaxAhead of the workloads ahead of it, the head of the queue first, as
	// QueuePosition.First.
	First []QueuedWorkload `json:"first"`
}

// QueuePlaces gives every pending workload (PendingInQueue) of wls its place in its ClusterQueue,
// keyed NAMESPACE/NAME, ordered as ExplainWorkload orders them (PendingOrder).
func QueuePlaces(wls []kueuev1beta2.Workload, localQueues map[string]string) map[string]Place {
	byCQ := map[string]bool{}
	for i := range wls {
		if wl := &wls[i]; PendingInQueue(wl) {
			if cq := ClusterQueueOf(wl, localQueues); cq != "" {
				byCQ[cq] = true
			}
		}
	}
	out := map[string]Place{}
	for cq := range byCQ {
		order := PendingOrder(wls, localQueues, cq)
		for i, wl := range order {
			out[wl.Namespace+"/"+wl.Name] = Place{Position: i + 1, Pending: len(order), First: firstAhead(order, i)}
		}
	}
	return out
}

// ReadQueuePlaces lists the hub's Workloads and LocalQueues in all namespaces with c and places
// the pending ones (QueuePlaces). why says why there are none when the viewer may not list them
// all, or the hub serves no kueue.x-k8s.io/v1beta2; err is any other failure.
func ReadQueuePlaces(ctx context.Context, c client.Reader) (places map[string]Place, why string, err error) {
	wls, lqs, err := listQueues(ctx, c)
	switch {
	case apierrors.IsForbidden(err):
		return nil, "queue positions need the right to list Workloads and LocalQueues in all namespaces", nil
	case meta.IsNoMatchError(err):
		return nil, "queue positions need Kueue's kueue.x-k8s.io/v1beta2 on the hub", nil
	case err != nil:
		return nil, "", err
	}
	return QueuePlaces(wls, clusterQueuesOf(lqs)), "", nil
}

// clusterQueuesOf maps each LocalQueue, NAMESPACE/NAME, to its ClusterQueue.
func clusterQueuesOf(lqs []kueuev1beta2.LocalQueue) map[string]string {
	out := make(map[string]string, len(lqs))
	for _, lq := range lqs {
		out[lq.Namespace+"/"+lq.Name] = string(lq.Spec.ClusterQueue)
	}
	return out
}
