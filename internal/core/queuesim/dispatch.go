package queuesim

import (
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

// dispatchDefaults is MultiKueue's AllAtOnce dispatch: each job admitted on the hub goes to the
// first worker, in the fleet's order, whose own Kueue has quota for it (the worker's GPUs of the
// model less what it admitted), whatever its nodes have free. A job no worker has quota for
// waits on the hub.
func (s *sim) dispatchDefaults() {
	full := map[string]int{} // per model, the fewest GPUs no worker had quota for in this pass
	kept := s.dispatching[:0]
	for _, r := range s.dispatching {
		if g, ok := full[r.model]; ok && r.GPUs() >= g {
			kept = append(kept, r) // quotas only shrink within a pass
			continue
		}
		t0 := time.Now()
		var chosen *worker
		for _, w := range s.workers {
			if w.spec.Model.Name == r.model && w.quotaUsed+r.GPUs() <= w.spec.GPUs() {
				chosen = w
				break
			}
		}
		s.decisions = append(s.decisions, time.Since(t0))
		if chosen == nil {
			full[r.model] = r.GPUs()
			kept = append(kept, r)
			continue
		}
		s.admitOn(r, chosen)
	}
	clear(s.dispatching[len(kept):])
	s.dispatching = kept
}

// shape is what decides a job's fit: its model and pods.
type shape struct {
	model        string
	pods, perPod int
}

// dispatchFlotilla is Flotilla's dispatcher: each job admitted on the hub, in admission order,
// is judged against every worker's figures (workloadfit.Gangs, Judge and Order, as the hub's
// dispatcher calls them) and offered to the first worker where it fits; a job that fits none
// waits on the hub without holding a worker's quota.
func (s *sim) dispatchFlotilla() {
	nofit := map[shape]bool{} // free GPUs only shrink within a pass: a shape that fit nowhere still does not
	kept := s.dispatching[:0]
	for _, r := range s.dispatching {
		k := shape{model: r.model, pods: r.Pods, perPod: r.PerPod}
		if nofit[k] {
			kept = append(kept, r)
			continue
		}
		usages := s.figures() // the add-on's work on the workers, not the dispatcher's: not timed
		t0 := time.Now()
		order := s.decide(r.wl, usages, r.model)
		s.decisions = append(s.decisions, time.Since(t0))
		if len(order) == 0 {
			nofit[k] = true
			kept = append(kept, r)
			continue
		}
		s.admitOn(r, s.byName[order[0]])
	}
	clear(s.dispatching[len(kept):])
	s.dispatching = kept
}

// figures is every worker's current ResourceUsage, by name.
func (s *sim) figures() map[string]*usagev1alpha1.ResourceUsage {
	now := s.wall()
	out := make(map[string]*usagev1alpha1.ResourceUsage, len(s.workers))
	for _, w := range s.workers {
		out[w.spec.Name] = w.figures(now)
	}
	return out
}

// decide is one dispatch decision: the workers to offer the workload to, best first, as
// Flotilla's dispatcher (internal/hub/kueue, Dispatcher.judge) computes them.
func (s *sim) decide(wl *kueuev1beta2.Workload, usages map[string]*usagev1alpha1.ResourceUsage, model string) []string {
	gangs := workloadfit.Gangs(wl, flavorLabels)
	now := s.wall()
	ranked := s.rank(usages, model)
	verdicts := make([]workloadfit.Verdict, 0, len(ranked))
	for _, name := range ranked {
		verdicts = append(verdicts, workloadfit.Judge(name, usages[name], gangs, now))
	}
	return workloadfit.Order(verdicts)
}

// rank is the workers in the dispatcher's order for a job of the model.
func (s *sim) rank(usages map[string]*usagev1alpha1.ResourceUsage, model string) []string {
	names := make([]string, len(s.workers))
	for i, w := range s.workers {
		names[i] = w.spec.Name
	}
	if s.o.Rank == RankMostFree {
		free := func(n string) int64 {
			q := gpufit.Free(&usages[n].Status, usagev1alpha1.ResourceNvidiaGPU, model)
			return q.Value()
		}
		slices.SortStableFunc(names, func(a, b string) int {
			fa, fb := free(a), free(b)
			switch {
			case fa > fb:
				return -1
			case fa < fb:
				return 1
			}
			return 0
		})
	}
	return names
}

// wall is the simulated now as a time.
func (s *sim) wall() time.Time {
	return epoch.Add(time.Duration(s.now * float64(time.Second)))
}

// flavorPrefix names the hub's ResourceFlavor of a model (as a FleetQueue names them).
const flavorPrefix = "gpu-"

// flavorLabels are the node labels of the hub's flavors: one per model.
func flavorLabels(f kueuev1beta2.ResourceFlavorReference) map[string]string {
	return map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: string(f)[len(flavorPrefix):]}
}

// workload is the Kueue Workload of a job admitted on the hub: one pod set of its pods, each
// asking for its GPUs (and a node selector for its model when it asks for one), with the
// hub's admission assigning the model's flavor.
func workload(r *run) *kueuev1beta2.Workload {
	per := *resource.NewQuantity(int64(r.PerPod), resource.DecimalSI)
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "train", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: per, corev1.ResourceCPU: resource.MustParse("4")},
		Limits:   corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: per},
	}}}}
	if r.Model != "" {
		spec.NodeSelector = map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: r.Model}
	}
	return &kueuev1beta2.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Team, Name: "job-" + strconv.Itoa(r.ID)},
		Spec: kueuev1beta2.WorkloadSpec{PodSets: []kueuev1beta2.PodSet{{
			Name: "main", Count: int32(r.Pods), Template: corev1.PodTemplateSpec{Spec: spec},
		}}},
		Status: kueuev1beta2.WorkloadStatus{Admission: &kueuev1beta2.Admission{
			ClusterQueue: kueuev1beta2.ClusterQueueReference(r.Team),
			PodSetAssignments: []kueuev1beta2.PodSetAssignment{{
				Name:    "main",
				Flavors: map[corev1.ResourceName]kueuev1beta2.ResourceFlavorReference{usagev1alpha1.ResourceNvidiaGPU: kueuev1beta2.ResourceFlavorReference(flavorPrefix + r.model)},
			}},
		}},
	}
}
