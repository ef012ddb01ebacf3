package fence

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// fenced is one fenced object on the spoke.
type fenced struct {
	Kind fencing.Kind
	Obj  *unstructured.Unstructured
}

// multiKueue says whether MultiKueue created obj.
func (x fenced) multiKueue() bool {
	_, ok := x.Obj.GetLabels()[fencing.LabelMultiKueueOrigin]
	return ok
}

// list returns every fenced object on the spoke: the objects of fenced works, and the Jobs and
// JobSets MultiKueue created. Kinds the spoke does not serve (JobSet without its CRD) are skipped.
func (f *Fencer) list(ctx context.Context) ([]fenced, error) {
	var out []fenced
	seen := map[types.UID]bool{}
	for _, k := range fencing.Kinds {
		selectors := []string{fencing.LabelFenced + "=true"}
		if k.MultiKueue {
			selectors = append(selectors, fencing.LabelMultiKueueOrigin)
		}
		for _, sel := range selectors {
			l, err := f.dyn.Resource(k.GroupVersionResource).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("listing fenced %s on the spoke: %w", k.Resource, err)
			}
			for i := range l.Items {
				if o := &l.Items[i]; !seen[o.GetUID()] {
					seen[o.GetUID()] = true
					out = append(out, fenced{Kind: k, Obj: o})
				}
			}
		}
	}
	return out, nil
}

// look is what one look of the fence did: the objects it stopped, and how long each step took.
type look struct {
	stopped []fenced
	// waiting counts the Jobs and JobSets left for a later look: Kueue has not yet evicted
	// their deactivated Workloads (kueueGrace).
	waiting int
	// pods counts the pods deleted.
	pods                    int
	deactivate, stop, hurry time.Duration
}

// add sums another look's counts and step times into l.
func (l *look) add(o look) {
	l.pods += o.pods
	l.deactivate += o.deactivate
	l.stop += o.stop
	l.hurry += o.hurry
}

// kueueGrace is how long after deactivating a Workload the fence leaves its running Job or JobSet
// to Kueue, until Kueue has evicted the Workload. Suspended while Kueue still holds the Workload
// admitted in its cache, Kueue would start the Job again (and it may create pods); once Kueue has
// evicted it, Kueue has seen the deactivation, and suspends the Job itself. Past kueueGrace the
// fence suspends it anyway (Kueue may be down), and never later than kueueMargin before the hub
// may start the workload elsewhere (leaveToKueue). On a loaded spoke with hundreds of Workloads
// Kueue took more than 3 s to evict some of them (bench/README.md).
const kueueGrace = 10 * time.Second

// kueueMargin is how long before the fence's deadline (LostAfter less the clock-skew bound) it
// stops waiting for Kueue: the pods it then deletes get about that long to stop.
const kueueMargin = 2 * time.Second

// leaveToKueue says whether a Job whose Workload the fence deactivated at since is still left to
// Kueue at now.
func leaveToKueue(e *episode, since, now time.Time) bool {
	until := since.Add(kueueGrace)
	if deadline := e.LastRenewed.Add(e.Timing.LostAfter - fencing.ClockSkew - kueueMargin); deadline.Before(until) {
		until = deadline
	}
	return now.Before(until)
}

// stopAll stops every fenced object not stopped yet. Kueue's Workloads go first (Kueue would
// start a suspended Job again while its Workload stays admitted), then the rest; each group in
// parallel (fenceWorkers). Then the pods of every suspended Job and JobSet are hurried
// (hurryAll). At hundreds of jobs one request after another would outlast LostAfter -
// FenceAfter. One object that fails does not keep the others from stopping. The Events that
// record the stops are the caller's to write (events), after what is urgent.
func (f *Fencer) stopAll(ctx context.Context, e *episode) (look, error) {
	var lk look
	all, err := f.list(ctx)
	if err != nil {
		return lk, err
	}
	var errs firstError
	now := f.opts.Clock.Now()
	var workloads, rest []*target
	for _, x := range all {
		t := &target{fenced: x}
		if x.Kind.Mode == fencing.Deactivate {
			workloads = append(workloads, t)
		} else {
			rest = append(rest, t)
		}
	}

	// Phase 1: deactivate Kueue's Workloads.
	watch := startStopwatch()
	f.stopEach(ctx, workloads, now, e.Epoch, &errs)
	lk.deactivate = watch.elapsed()
	leftToKueue := recordDeactivated(e, workloads)

	// Phase 2: stop the rest, but for the Jobs and JobSets Kueue will suspend itself once it has
	// evicted their Workloads (leaveToKueue).
	var stopNow []*target
	for _, t := range rest {
		if since, left := leftToKueue[t.Obj.GetUID()]; left && !suspended(t.Obj) && leaveToKueue(e, since, f.opts.Clock.Now()) {
			lk.waiting++
			continue
		}
		stopNow = append(stopNow, t)
	}
	watch = startStopwatch()
	f.stopEach(ctx, stopNow, now, e.Epoch, &errs)
	lk.stop = watch.elapsed()

	// Phase 3: a suspended Job's pods are hurried whoever suspended it: Kueue on the spoke
	// suspends a Job itself once the fence deactivates its Workload, and may do it first.
	targets := slices.Concat(workloads, rest)
	var hurry []fenced
	for _, t := range targets {
		if t.held && suspended(t.Obj) && !fencing.Finished(t.Obj) && !e.hurried[t.Obj.GetUID()] {
			hurry = append(hurry, t.fenced)
		}
	}
	watch = startStopwatch()
	n, err := f.hurryAll(ctx, hurry, e)
	errs.add(err)
	lk.pods += n
	lk.hurry = watch.elapsed()
	// Stopped counts only what the fence changed, whatever becomes of the pods.
	for _, t := range targets {
		if t.changed {
			lk.stopped = append(lk.stopped, t.fenced)
		}
	}
	return lk, errs.get()
}

// target is one fenced object in a look, and what stopping it did.
type target struct {
	fenced
	// held: the object is stopped, by the fence now or before, or by its owner's wish.
	held bool
	// changed: the fence changed it in this look, at changedAt (the injected clock).
	changed   bool
	changedAt time.Time
}

// stopEach stops targets in parallel (fenceWorkers), recording in each what became of it; errors
// go to errs, and one object that fails does not keep the others from stopping.
func (f *Fencer) stopEach(ctx context.Context, targets []*target, now time.Time, epoch int64, errs *firstError) {
	workqueue.ParallelizeUntil(ctx, fenceWorkers, len(targets), func(i int) {
		t := targets[i]
		changed, held, err := f.stop(ctx, &t.fenced, now, epoch)
		errs.add(err)
		t.held, t.changed = held, changed
		if changed {
			t.changedAt = f.opts.Clock.Now()
		}
	})
}

// recordDeactivated notes in e when the fence deactivated each Workload's owner (a Job or JobSet),
// and returns the owners left to Kueue: those whose Workload is held but neither evicted nor
// finished yet, with when it was deactivated (the episode's start for one deactivated before).
func recordDeactivated(e *episode, workloads []*target) map[types.UID]time.Time {
	left := map[types.UID]time.Time{}
	for _, t := range workloads {
		owner := metav1.GetControllerOfNoCopy(t.Obj)
		if owner == nil {
			continue
		}
		if t.changed {
			if e.deactivated == nil {
				e.deactivated = map[types.UID]time.Time{}
			}
			e.deactivated[owner.UID] = t.changedAt
		}
		if t.held && !evicted(t.Obj) && !fencing.Finished(t.Obj) {
			since, ok := e.deactivated[owner.UID]
			if !ok {
				since = e.At
			}
			left[owner.UID] = since
		}
	}
	return left
}

// stopwatch measures how long a step took, in wall time: a figure for the fence's log and
// metrics, never an input to a decision (those read the injected clock).
type stopwatch struct{ start time.Time }

func startStopwatch() stopwatch { return stopwatch{start: time.Now()} }

func (w stopwatch) elapsed() time.Duration { return time.Since(w.start) }

// evicted says whether Kueue has evicted the Workload obj (condition Evicted True).
func evicted(obj *unstructured.Unstructured) bool { return fencing.ConditionTrue(obj, "Evicted") }

// events records each stop beside its object, in parallel.
func (f *Fencer) events(ctx context.Context, e *episode, stopped []fenced) {
	why := fmt.Sprintf("stopped by the fence: the agent of cluster %s has not renewed its lease with the hub since %s (fence after %s); the hub may start this workload elsewhere from %s",
		f.opts.ClusterName, e.LastRenewed.UTC().Format(time.RFC3339), e.Timing.FenceAfter, e.LastRenewed.Add(e.Timing.LostAfter).UTC().Format(time.RFC3339))
	workqueue.ParallelizeUntil(ctx, fenceWorkers, len(stopped), func(i int) { f.event(ctx, stopped[i].Obj, "Fenced", why) })
}

// stop stops one object. It says whether it changed it, and whether the object is held (stopped
// now, before, or by its owner's wish; not when it is gone). On a conflict (Kueue on the spoke
// suspends a Job once the fence deactivates its Workload, often at the same moment) it reads the
// object again and looks once more; x.Obj is then the object as read.
func (f *Fencer) stop(ctx context.Context, x *fenced, now time.Time, epoch int64) (changed, held bool, err error) {
	ri := f.dyn.Resource(x.Kind.GroupVersionResource).Namespace(x.Obj.GetNamespace())
	held = true
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := fencing.Stop(x.Obj, x.Kind, now, epoch)
		if err != nil || !c {
			return err
		}
		if _, err = ri.Update(ctx, x.Obj, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
			fresh, gerr := ri.Get(ctx, x.Obj.GetName(), metav1.GetOptions{})
			if gerr != nil || fresh.GetUID() != x.Obj.GetUID() {
				held = false // gone or replaced: the next look lists it anew
				return client.IgnoreNotFound(gerr)
			}
			x.Obj = fresh
			return err
		}
		changed = err == nil
		return err
	})
	if err != nil {
		return false, false, fmt.Errorf("stopping %s %s/%s: %w", x.Obj.GetKind(), x.Obj.GetNamespace(), x.Obj.GetName(), err)
	}
	return changed, held, nil
}

// suspended says whether obj's spec.suspend is true (a Job or JobSet that runs no pods).
func suspended(obj *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
	return v
}

// removeStale deletes the unfinished objects MultiKueue created, in parallel, and says how
// many: the hub's Kueue holds their workloads, and runs them again wherever it dispatches them.
func (f *Fencer) removeStale(ctx context.Context, e *episode) (int, error) {
	all, err := f.list(ctx)
	if err != nil {
		return 0, err
	}
	var stale []fenced
	for _, x := range all {
		// Stopped by the fence, or by Kueue once the fence deactivated the Workload.
		if x.multiKueue() && !fencing.Finished(x.Obj) {
			stale = append(stale, x)
		}
	}
	why := fmt.Sprintf("removed while cut off from the hub: no lease renewal since %s, past the %s after which the hub declares cluster %s lost and MultiKueue runs this job elsewhere",
		e.LastRenewed.UTC().Format(time.RFC3339), e.Timing.LostAfter+fencing.ClockSkew, f.opts.ClusterName)
	var errs firstError
	var n atomic.Int64
	workqueue.ParallelizeUntil(ctx, fenceWorkers, len(stale), func(i int) {
		if err := f.remove(ctx, stale[i], why); err != nil {
			errs.add(err)
			return
		}
		n.Add(1)
	})
	return int(n.Load()), errs.get()
}

// remove deletes one fenced object, that very object (its UID), and records why beside it.
func (f *Fencer) remove(ctx context.Context, x fenced, why string) error {
	err := f.dyn.Resource(x.Kind.GroupVersionResource).Namespace(x.Obj.GetNamespace()).Delete(ctx, x.Obj.GetName(), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: ptr.To(x.Obj.GetUID())}, PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing %s %s/%s: %w", x.Obj.GetKind(), x.Obj.GetNamespace(), x.Obj.GetName(), err)
	}
	f.event(ctx, x.Obj, "RemovedStale", why)
	return nil
}

// resolution counts what lowering a fence did.
type resolution struct{ Resumed, Removed, Kept int }

// resolve resumes or removes each stopped object, given the cluster's epoch on the hub now and
// the one the fence was raised under.
func (f *Fencer) resolve(ctx context.Context, cur *registration.HubClients, epoch, fencedUnder int64) (resolution, error) {
	var res resolution
	all, err := f.list(ctx)
	if err != nil {
		return res, err
	}
	for _, x := range all {
		rec, stopped, err := fencing.StoppedOf(x.Obj)
		if err != nil {
			f.opts.Log.Error(err, "a stopped object's record does not read; leaving it as it is")
			res.Kept++
			continue
		}
		if !stopped {
			// Kueue suspends a Job itself once the fence deactivates its Workload: such a
			// copy of MultiKueue's carries no record, and goes when the cluster was lost.
			if !x.multiKueue() || epoch <= fencedUnder || fencing.Finished(x.Obj) {
				continue
			}
			rec = fencing.Stopped{Epoch: fencedUnder}
		}
		action, why, err := f.decide(ctx, cur, x, rec, epoch)
		if err != nil {
			return res, err
		}
		ri := f.dyn.Resource(x.Kind.GroupVersionResource).Namespace(x.Obj.GetNamespace())
		switch action {
		case "resume":
			if _, err := fencing.Resume(x.Obj); err != nil {
				return res, err
			}
			if _, err := ri.Update(ctx, x.Obj, metav1.UpdateOptions{}); err != nil {
				return res, fmt.Errorf("resuming %s %s/%s: %w", x.Obj.GetKind(), x.Obj.GetNamespace(), x.Obj.GetName(), err)
			}
			res.Resumed++
			f.event(ctx, x.Obj, "Resumed", "resumed after the fence: "+why)
		case "remove":
			if err := f.remove(ctx, x, "removed after the fence: "+why); err != nil {
				return res, err
			}
			res.Removed++
		default:
			res.Kept++
		}
	}
	return res, nil
}

// decide says what becomes of one stopped object: resume when the hub never declared the cluster
// lost since it was stopped; otherwise remove what MultiKueue created (it dispatches it again)
// and resume a work's object only while the work is still on the hub.
func (f *Fencer) decide(ctx context.Context, cur *registration.HubClients, x fenced, rec fencing.Stopped, epoch int64) (string, string, error) {
	if epoch <= rec.Epoch {
		return "resume", fmt.Sprintf("the hub did not declare cluster %s lost (epoch %d)", f.opts.ClusterName, epoch), nil
	}
	lost := fmt.Sprintf("the hub declared cluster %s lost while it was stopped (epoch %d, stopped under %d)", f.opts.ClusterName, epoch, rec.Epoch)
	if x.multiKueue() {
		if fencing.Finished(x.Obj) {
			return "keep", "", nil
		}
		return "remove", lost + ", and MultiKueue dispatches it again", nil
	}
	name := x.Obj.GetAnnotations()[fencing.AnnotationWork]
	if name == "" {
		return "keep", "", nil
	}
	w := &workv1.ManifestWork{}
	err := cur.Client.Get(ctx, client.ObjectKey{Namespace: f.opts.ClusterName, Name: name}, w)
	switch {
	case apierrors.IsNotFound(err):
		return "keep", "", nil // the work agent removes the objects of a deleted work
	case err != nil:
		return "", "", fmt.Errorf("reading ManifestWork %s/%s: %w", f.opts.ClusterName, name, err)
	case !w.DeletionTimestamp.IsZero():
		return "keep", "", nil
	}
	return "resume", lost + fmt.Sprintf(", but ManifestWork %s is still the cluster's", name), nil
}

// report writes the episode into the ManagedCluster's WorkloadsFenced condition.
func (f *Fencer) report(ctx context.Context, cur *registration.HubClients, live *clusterv1.ManagedCluster, e *episode, res resolution) error {
	now := f.opts.Clock.Now()
	patched := live.DeepCopy()
	meta.SetStatusCondition(&patched.Status.Conditions, metav1.Condition{
		Type: fencing.ConditionWorkloadsFenced, Status: metav1.ConditionFalse, Reason: "Healed", ObservedGeneration: live.Generation,
		LastTransitionTime: metav1.NewTime(now),
		Message: fmt.Sprintf("last renewal %s; fenced at %s (fence after %s); %s; healed at %s: %d workloads stopped, %d resumed, %d removed, %d kept; epoch %d at the fence, %d now",
			e.LastRenewed.UTC().Format(time.RFC3339), e.At.UTC().Format(time.RFC3339), e.Timing.FenceAfter, heldText(e), now.UTC().Format(time.RFC3339),
			e.Stopped, res.Resumed, res.Removed+e.Removed, res.Kept, e.Epoch, fencing.Epoch(live.Annotations)),
	})
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := cur.Client.Status().Patch(rctx, patched, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("reporting %s on ManagedCluster %s: %w", fencing.ConditionWorkloadsFenced, f.opts.ClusterName, err)
	}
	return nil
}

// heldText says when the fence had stopped everything, for WorkloadsFenced.
func heldText(e *episode) string {
	if e.Held.IsZero() {
		return "never all stopped"
	}
	return fmt.Sprintf("all stopped %s after the fence", e.Held.Sub(e.At).Round(time.Second))
}

// event records what the fence did beside the object on the spoke; a failure is only logged.
func (f *Fencer) event(ctx context.Context, obj *unstructured.Unstructured, reason, msg string) {
	now := metav1.NewTime(f.opts.Clock.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: obj.GetName() + ".", Namespace: obj.GetNamespace()},
		InvolvedObject: corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
			Name: obj.GetName(), UID: obj.GetUID()},
		Reason: reason, Message: msg, Type: corev1.EventTypeWarning, Count: 1,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "flotilla-agent"},
		ReportingController: "flotilla.io/agent", ReportingInstance: f.opts.ClusterName,
	}
	if reason == "Resumed" {
		ev.Type = corev1.EventTypeNormal
	}
	if _, err := f.kube.CoreV1().Events(obj.GetNamespace()).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		f.opts.Log.Error(err, "recording an event", "object", obj.GetNamespace()+"/"+obj.GetName(), "reason", reason)
	}
}
