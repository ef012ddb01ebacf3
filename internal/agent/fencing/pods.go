package fencing

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/fencing"
)

// podSelector is the label selector of the pods of a suspended Job or JobSet, "" for other kinds
// (scaled to zero, their controllers delete their pods with the pods' own grace periods).
func podSelector(x fenced) string {
	switch x.Kind.Resource {
	case "jobs":
		return "batch.kubernetes.io/controller-uid=" + string(x.Obj.GetUID())
	case "jobsets":
		return "jobset.sigs.k8s.io/jobset-name=" + x.Obj.GetName()
	}
	return ""
}

// stopGrace is the grace period the fence gives a stopped workload's pods: the time left until
// the hub may start the workload elsewhere (LostAfter after the last renewal, less the clock-skew
// bound), at least 1 s (0 would remove the pod from the API while its containers may still run),
// and never more than the pod asks for.
func stopGrace(e *episode, now time.Time, own *int64) int64 {
	left := int64(e.LastRenewed.Add(e.Timing.LostAfter-fencing.ClockSkew).Sub(now) / time.Second)
	grace := max(left, 1)
	if own != nil && *own < grace {
		grace = max(*own, 1)
	}
	return grace
}

// hurryPods deletes the pods of a Job or JobSet the fence just suspended with stopGrace: the
// controllers would delete them with their own grace period (30 s by default), which can outlast
// the loss, and the hub then starts the workload elsewhere while its pods still run here. A pod
// already going with a shorter grace keeps it (the API server only shortens it).
func (f *Fencer) hurryPods(ctx context.Context, x fenced, e *episode) error {
	sel := podSelector(x)
	if sel == "" {
		return nil
	}
	pods, err := f.kube.CoreV1().Pods(x.Obj.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("listing the pods of %s %s/%s: %w", x.Obj.GetKind(), x.Obj.GetNamespace(), x.Obj.GetName(), err)
	}
	now := f.opts.Clock.Now()
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		err := f.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To(stopGrace(e, now, p.Spec.TerminationGracePeriodSeconds)),
			Preconditions:      &metav1.Preconditions{UID: ptr.To(p.UID)},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("stopping pod %s/%s of %s %s: %w", p.Namespace, p.Name, x.Obj.GetKind(), x.Obj.GetName(), err)
		}
	}
	return nil
}
