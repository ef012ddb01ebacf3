package kueue

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/scheduler/plugins/gpufit"
)

const (
	// DispatcherName is the multiKueue.dispatcherName of Kueue's Configuration on the hub that
	// hands the choice of workers to Flotilla's dispatcher (hub option KueueDispatcher).
	DispatcherName = "flotilla.io/placement-ranked"
	// DefaultRound is how long a workload waits on the workers nominated so far before the next
	// one is added.
	DefaultRound = 3 * time.Second
	// gpuResource is the resource the dispatcher checks workers' figures for.
	gpuResource = "nvidia.com/gpu"
	// gpuModelLabel is the node label a pod selects a GPU model with.
	gpuModelLabel = "nvidia.com/gpu.product"
)

// Order puts the workers that fit first and the others after them, each group in rank order
// (best first). fits says whether a worker's figures fit the workload.
func Order(ranked []string, fits func(string) bool) []string {
	out := make([]string, 0, len(ranked))
	var rest []string
	for _, c := range ranked {
		if fits(c) {
			out = append(out, c)
		} else {
			rest = append(rest, c)
		}
	}
	return append(out, rest...)
}

// Nominate is the workers a workload is offered to after rounds rounds: those of current still
// in order, and the first rounds+1 of order. Nominations only grow while a worker stays in the
// config, so a workload queued on a worker is not taken from it while it waits for the next.
func Nominate(order, current []string, rounds int) []string {
	var out []string
	for _, c := range current {
		if slices.Contains(order, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
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

// GPURequirement is what the workload's pods ask of a worker's GPUs: the total, and one node with
// its largest pod's GPUs free, of the model its pods select (any when none does). ok is false
// when its pods ask for no GPUs.
func GPURequirement(wl *kueuev1beta2.Workload) (req gpufit.Requirement, ok bool) {
	req.Resource = gpuResource
	var largest resource.Quantity
	for _, ps := range wl.Spec.PodSets {
		per := podRequest(ps.Template.Spec)
		if per.IsZero() {
			continue
		}
		ok = true
		if m := ps.Template.Spec.NodeSelector[gpuModelLabel]; m != "" {
			req.Model = m
		}
		total := per.DeepCopy()
		total.Mul(int64(ps.Count))
		req.Total.Add(total)
		if per.Cmp(largest) > 0 {
			largest = per
		}
	}
	if ok {
		req.PerNode, req.Nodes = largest, 1
	}
	return req, ok
}

// podRequest is a pod's GPUs as the scheduler counts them (resourcehelper.PodRequests: its
// containers' sum or its largest init container, and its overhead). A container that gives only
// a limit of GPUs asks for that much, as the API server defaults requests from limits when the
// pod is made.
func podRequest(spec corev1.PodSpec) resource.Quantity {
	spec = *spec.DeepCopy()
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			if _, ok := r.Requests[gpuResource]; ok {
				continue
			}
			if q, ok := r.Limits[gpuResource]; ok {
				if r.Requests == nil {
					r.Requests = corev1.ResourceList{}
				}
				r.Requests[gpuResource] = q
			}
		}
	}
	return resourcehelper.PodRequests(&corev1.Pod{Spec: spec}, resourcehelper.PodResourcesOptions{})[gpuResource]
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
