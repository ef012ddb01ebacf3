package fence

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// podsOf are the pods of the suspended Jobs and JobSets in xs, by the UID of each: two lists of
// the whole spoke (the Jobs of JobSets, when there is a JobSet, and the pods of Jobs), however
// many objects xs holds. A pod counts only when its controller reference names a Job of xs, or a
// Job whose own names a JobSet of xs, in the same namespace, so that a pod that merely carries
// the label, or names the UID from another namespace, is never deleted. Other kinds have none
// here: scaled to zero, their controllers delete their pods with the pods' own grace periods.
func (f *Fencer) podsOf(ctx context.Context, xs []fenced) (map[types.UID][]corev1.Pod, error) {
	// owner: a Job's UID -> the UID of the object of xs it belongs to (itself, or its JobSet).
	owner := map[types.UID]types.UID{}
	ns := map[types.UID]string{}
	jobSets := map[types.UID]bool{}
	for _, x := range xs {
		switch x.Kind.Resource {
		case "jobs":
			owner[x.Obj.GetUID()] = x.Obj.GetUID()
		case "jobsets":
			jobSets[x.Obj.GetUID()] = true
		}
		ns[x.Obj.GetUID()] = x.Obj.GetNamespace()
	}
	if len(jobSets) > 0 {
		jobs, err := f.kube.BatchV1().Jobs("").List(ctx, metav1.ListOptions{LabelSelector: "jobset.sigs.k8s.io/jobset-name"})
		if err != nil {
			return nil, fmt.Errorf("listing the Jobs of JobSets: %w", err)
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if ref := metav1.GetControllerOfNoCopy(j); ref != nil && jobSets[ref.UID] && ns[ref.UID] == j.Namespace {
				owner[j.UID], ns[j.UID] = ref.UID, j.Namespace
			}
		}
	}
	out := map[types.UID][]corev1.Pod{}
	if len(owner) == 0 {
		return out, nil
	}
	pods, err := f.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/controller-uid"})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of Jobs: %w", err)
	}
	for i := range pods.Items {
		p := pods.Items[i]
		ref := metav1.GetControllerOfNoCopy(&p)
		if ref == nil {
			continue
		}
		if of, ok := owner[ref.UID]; ok && ns[ref.UID] == p.Namespace {
			out[of] = append(out[of], p)
		}
	}
	return out, nil
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

// hurryAll deletes the pods of the suspended Jobs and JobSets in xs with stopGrace, in parallel:
// their controllers would delete them with their own grace period (30 s by default), which can
// outlast the loss, and the hub then starts the workload elsewhere while its pods still run here.
// A pod already going by then is left as it is (the API server would only shorten its grace
// anyway). An object whose pods all went is recorded in e.hurried and not looked at again in
// this episode: a suspended Job makes no new pods. It says how many pods it deleted.
func (f *Fencer) hurryAll(ctx context.Context, xs []fenced, e *episode) (int, error) {
	if len(xs) == 0 {
		return 0, nil
	}
	pods, err := f.podsOf(ctx, xs)
	if err != nil {
		return 0, fmt.Errorf("stopping the pods of suspended Jobs: %w", err)
	}
	now := f.opts.Clock.Now()
	type doomed struct {
		pod   *corev1.Pod
		of    int
		grace int64
	}
	var todo []doomed
	for i, x := range xs {
		for j := range pods[x.Obj.GetUID()] {
			p := &pods[x.Obj.GetUID()][j]
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			grace := stopGrace(e, now, p.Spec.TerminationGracePeriodSeconds)
			if p.DeletionTimestamp != nil && !p.DeletionTimestamp.After(now.Add(time.Duration(grace)*time.Second)) {
				continue // already going soon enough (the fence looks again every second)
			}
			todo = append(todo, doomed{pod: p, of: i, grace: grace})
		}
	}
	failed := make([]bool, len(xs))
	var errs firstError
	workqueue.ParallelizeUntil(ctx, fenceWorkers, len(todo), func(i int) {
		d := todo[i]
		err := f.kube.CoreV1().Pods(d.pod.Namespace).Delete(ctx, d.pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To(d.grace),
			Preconditions:      &metav1.Preconditions{UID: ptr.To(d.pod.UID)},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			x := xs[d.of]
			failed[d.of] = true
			errs.add(fmt.Errorf("stopping pod %s/%s of %s %s: %w", d.pod.Namespace, d.pod.Name, x.Obj.GetKind(), x.Obj.GetName(), err))
		}
	})
	if e.hurried == nil {
		e.hurried = map[types.UID]bool{}
	}
	for i, x := range xs {
		if !failed[i] {
			e.hurried[x.Obj.GetUID()] = true
		}
	}
	f.opts.Log.V(1).Info("fence: deleted the pods of suspended Jobs", "cluster", f.opts.ClusterName, "jobs", len(xs), "pods", len(todo))
	return len(todo), errs.get()
}

// fenceWorkers is how many requests the fence has in flight at once, so that a fence over
// hundreds of jobs ends in seconds; the spoke client's rate limit (SpokeQPS) applies as well.
const fenceWorkers = 32

// firstError keeps the first of the errors of parallel work.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (e *firstError) add(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

func (e *firstError) get() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}
