package chaos

// Whether a job moved off a lost worker ran twice, from what a watch saw of its pods there. Not
// build-tagged: TestClassifyRerun runs with the unit tests; the watch (spokeWatch) and
// TestKueueFailover, which use it, run with the integration tests.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// podLife is what a watch saw of one pod of a job on the lost worker.
type podLife struct {
	// ended is when its containers stopped on their own, once its phase is Succeeded or Failed
	// (the latest container finishedAt, else when the watch saw the phase); zero while it is
	// Pending or Running.
	ended time.Time
	// succeeded says it ended Succeeded: the job's work was done.
	succeeded bool
	// deadline is its earliest deletionTimestamp, by when a kubelet has killed what is left;
	// zero while it is not being deleted.
	deadline time.Time
	// removed is when the watch saw its object go; zero while it exists. The pod stopped then at
	// the latest, or earlier at its deadline: a kubelet stops a deleted pod's containers by the
	// end of its grace period, while kwok, which stands in for the kubelets here, removes the
	// objects of hundreds of pods deleted at once over a minute or more on one machine.
	removed time.Time
}

// stopped is when the pod stopped running at the latest: the earliest of its end, its deletion
// deadline and its removal; zero while none has happened.
func (l podLife) stopped() time.Time {
	var at time.Time
	for _, t := range []time.Time{l.ended, l.deadline, l.removed} {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	return at
}

// runningAt says the pod may have been running at start, a pod's status.startTime: it had not
// stopped by then. startTime has a resolution of one second, so a pod that stopped within the
// second of start counts as running (the doubt goes against the system under test).
func (l podLife) runningAt(start time.Time) bool {
	s := l.stopped()
	return s.IsZero() || !start.After(s.Truncate(time.Second))
}

// lifeOf updates l from the pod's current state, seen at seen.
func lifeOf(l podLife, p *corev1.Pod, seen time.Time) podLife {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		if l.ended.IsZero() {
			l.ended = seen
			var last time.Time
			for _, cs := range p.Status.ContainerStatuses {
				if term := cs.State.Terminated; term != nil && term.FinishedAt.After(last) {
					last = term.FinishedAt.Time
				}
			}
			if !last.IsZero() && last.Before(seen) {
				l.ended = last
			}
		}
		l.succeeded = p.Status.Phase == corev1.PodSucceeded
	}
	// The earliest deletionTimestamp counts: a later delete that shortens the grace period (the
	// kubelet's, with 0) moves it to that moment, after the kill.
	if dl := deadline(p); !dl.IsZero() && (l.deadline.IsZero() || dl.Before(l.deadline)) {
		l.deadline = dl
	}
	return l
}

// deadline is when the pod's containers have stopped at the latest: its deletionTimestamp, the
// end of the grace period its deletion gave it, when the kubelet kills what is left; zero while
// it is not being deleted.
func deadline(p *corev1.Pod) time.Time {
	if p.DeletionTimestamp == nil {
		return time.Time{}
	}
	return p.DeletionTimestamp.Time
}

// rerun is how a job's start on the other worker relates to its pods on the lost worker.
type rerun int

const (
	// movedCleanly: when it started elsewhere, every pod of it on the lost worker had stopped
	// before finishing its work (stopped by a fence or deleted).
	movedCleanly rerun = iota
	// ranConcurrently: a pod of it on the lost worker was Pending or Running (not past its
	// deletion grace) when it started elsewhere: it ran on both workers at the same time.
	ranConcurrently
	// ranAgainAfterFinishing: no pod of it ran on the lost worker then, but one had Succeeded: it
	// ran again after it had finished (its GPU time is wasted, not doubled at once).
	ranAgainAfterFinishing
)

func (r rerun) String() string {
	return [...]string{"moved cleanly", "ran on both workers at the same time", "ran again after it had finished"}[r]
}

// classify says how a job that started on the other worker at start relates to its pods on
// the lost worker, and when the last of those that stopped did.
func classify(pods []podLife, start time.Time) (rerun, time.Time) {
	var last time.Time
	finished := false
	for _, l := range pods {
		if l.runningAt(start) {
			return ranConcurrently, last
		}
		if s := l.stopped(); s.After(last) {
			last = s
		}
		finished = finished || (l.succeeded && !l.ended.After(start))
	}
	if finished {
		return ranAgainAfterFinishing, last
	}
	return movedCleanly, last
}
