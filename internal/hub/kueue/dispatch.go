package kueue

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

const (
	// DispatcherName is the multiKueue.dispatcherName of Kueue's Configuration on the hub that
	// hands the choice of workers to Flotilla's dispatcher (hub option KueueDispatcher).
	DispatcherName = "flotilla.io/placement-ranked"
	// DefaultRound is how long a workload waits on the workers nominated so far before the next
	// one is added.
	DefaultRound = 3 * time.Second
)

// Nominate is the workers a workload is offered to after rounds rounds: those of current still
// in the config (ranked), and the first rounds+1 of order (the workers it may be offered to,
// best first), none more while holding (Holding). Nominations only grow while a worker stays in
// the config, so a workload queued on a worker is not taken from it while it waits for the
// next, even when the worker's figures no longer show room for it.
func Nominate(ranked, order, current []string, rounds int, holding bool) []string {
	var out []string
	for _, c := range current {
		if slices.Contains(ranked, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if holding && len(out) > 0 {
		return out
	}
	for _, c := range order {
		if len(out) > rounds && rounds >= 0 {
			break
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// HoldRounds is how many rounds a workload waits on the workers it was offered to while the
// figures still say it fits one of them, before it is offered to more anyway (a worker's own
// quota, which the figures do not show, may keep it from admitting the workload).
const HoldRounds = 3

// Holding says whether a workload waits on the workers it was offered to (current) rather than
// being offered to one more: a worker of current still fits it (verdicts), and fewer than
// HoldRounds rounds have passed. A worker that fits is slow to admit, not full: offering the
// workload to another as well only makes MultiKueue copy it there, and both may start its pods.
func Holding(current []string, verdicts []workloadfit.Verdict, rounds int) bool {
	if rounds >= HoldRounds {
		return false
	}
	for _, v := range verdicts {
		if v.State == workloadfit.Fits && slices.Contains(current, v.Cluster) {
			return true
		}
	}
	return false
}

// MultiKueueCheck returns the state of the workload's MultiKueue admission check among checks
// (the names of the AdmissionChecks of controller kueue.x-k8s.io/multikueue), or nil.
func MultiKueueCheck(wl *kueuev1beta2.Workload, checks map[string]bool) *kueuev1beta2.AdmissionCheckState {
	for i := range wl.Status.AdmissionChecks {
		if checks[string(wl.Status.AdmissionChecks[i].Name)] {
			return &wl.Status.AdmissionChecks[i]
		}
	}
	return nil
}

// Dispatchable says whether the dispatcher chooses workers for the workload now: its MultiKueue
// check is pending, it holds quota on the hub, no worker has it yet, and it is neither finished
// nor being evicted. An evicted workload still holds its quota until its Job has stopped (after
// a worker's loss, for example); a worker nominated then would admit a copy that MultiKueue
// deactivates at once, and Kueue v0.17.0 never removes that copy when the workload is admitted
// again, so the workload would wait on it for ever. It is nominated once it holds quota again.
func Dispatchable(wl *kueuev1beta2.Workload, check *kueuev1beta2.AdmissionCheckState) bool {
	return check != nil && check.State == kueuev1beta2.CheckStatePending && wl.DeletionTimestamp.IsZero() &&
		wl.Status.ClusterName == nil && wl.Status.Admission != nil &&
		!meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadFinished) &&
		!meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadEvicted)
}

// Rounds is how many rounds have passed since first, the time of the first nomination. Each
// round is twice as long as the one before (round, 2 x round, 4 x round, ...): a workload that
// waits because the workers are slow to take it, not full, is then not copied to every worker
// (MultiKueue copies a workload to each worker it is offered to, and deletes the copies the
// winner does not need).
func Rounds(first, now time.Time, round time.Duration) int {
	if round <= 0 || now.Before(first) {
		return 0
	}
	n := 0
	for end := round; now.Sub(first) >= end; end = 2*end + round {
		n++
	}
	return n
}

// RoundEnd is when round n (counted from 0) ends: first + round x (2^(n+1) - 1).
func RoundEnd(first time.Time, n int, round time.Duration) time.Time {
	end := round
	for range n {
		end = 2*end + round
	}
	return first.Add(end)
}

// Since is when the workload's nomination began: when it last reserved quota on the hub.
func Since(wl *kueuev1beta2.Workload) time.Time {
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved); c != nil {
		return c.LastTransitionTime.Time
	}
	return wl.CreationTimestamp.Time
}
