package fencing

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/fencing"
)

// ownedPods are the pods of a suspended Job, or of the Jobs of a suspended JobSet, that are
// really theirs: found by the label their controller sets, and kept only when their controller
// reference names the Job (and the Job's names the JobSet), so that a pod that merely carries
// the label is never deleted. Other kinds have none here: scaled to zero, their controllers
// delete their pods with the pods' own grace periods.
func (f *Fencer) ownedPods(ctx context.Context, x fenced) ([]corev1.Pod, error) {
	ns := x.Obj.GetNamespace()
	switch x.Kind.Resource {
	case "jobs":
		return f.podsOfJob(ctx, ns, x.Obj.GetUID())
	case "jobsets":
		jobs, err := f.kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: "jobset.sigs.k8s.io/jobset-name=" + x.Obj.GetName()})
		if err != nil {
			return nil, fmt.Errorf("listing the Jobs of JobSet %s/%s: %w", ns, x.Obj.GetName(), err)
		}
		var out []corev1.Pod
		for i := range jobs.Items {
			if !controlledBy(&jobs.Items[i], x.Obj.GetUID()) {
				continue
			}
			pods, err := f.podsOfJob(ctx, ns, jobs.Items[i].UID)
			if err != nil {
				return nil, err
			}
			out = append(out, pods...)
		}
		return out, nil
	}
	return nil, nil
}

// podsOfJob are the pods the Job of uid controls.
func (f *Fencer) podsOfJob(ctx context.Context, ns string, uid types.UID) ([]corev1.Pod, error) {
	l, err := f.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/controller-uid=" + string(uid)})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of Job %s in %s: %w", uid, ns, err)
	}
	var out []corev1.Pod
	for i := range l.Items {
		if controlledBy(&l.Items[i], uid) {
			out = append(out, l.Items[i])
		}
	}
	return out, nil
}

// controlledBy says whether o's controller reference names uid.
func controlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(o)
	return ref != nil && ref.UID == uid
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

// hurryPods deletes the pods of a suspended Job or JobSet with stopGrace: the controllers would
// delete them with their own grace period (30 s by default), which can outlast the loss, and the
// hub then starts the workload elsewhere while its pods still run here. A pod already going by
// then is left as it is (the API server would only shorten its grace anyway).
func (f *Fencer) hurryPods(ctx context.Context, x fenced, e *episode) error {
	pods, err := f.ownedPods(ctx, x)
	if err != nil {
		return fmt.Errorf("stopping the pods of %s %s/%s: %w", x.Obj.GetKind(), x.Obj.GetNamespace(), x.Obj.GetName(), err)
	}
	now := f.opts.Clock.Now()
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		grace := stopGrace(e, now, p.Spec.TerminationGracePeriodSeconds)
		if p.DeletionTimestamp != nil && !p.DeletionTimestamp.After(now.Add(time.Duration(grace)*time.Second)) {
			continue // already going soon enough (the fence looks again every second)
		}
		err := f.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To(grace),
			Preconditions:      &metav1.Preconditions{UID: ptr.To(p.UID)},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("stopping pod %s/%s of %s %s: %w", p.Namespace, p.Name, x.Obj.GetKind(), x.Obj.GetName(), err)
		}
	}
	return nil
}
