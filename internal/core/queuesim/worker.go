package queuesim

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// worker is one simulated worker cluster: its nodes' free GPUs, its own Kueue's quota, the jobs
// its Kueue admitted whose pods have not all started, and its ResourceUsage figures.
type worker struct {
	spec WorkerSpec
	free []int // free GPUs per node
	// quotaUsed is the GPUs its Kueue admitted (running or waiting for nodes).
	quotaUsed int
	// waiting are jobs its Kueue admitted whose pods have not all started, in admission order.
	waiting []*run
	usage   *usagev1alpha1.ResourceUsage
	dirty   bool // the nodes changed since usage was built
}

func newWorker(s WorkerSpec) *worker {
	w := &worker{spec: s, free: make([]int, s.Nodes), dirty: true}
	for i := range w.free {
		w.free[i] = s.Model.PerNode
	}
	return w
}

// place binds the pods on nodes as kube-scheduler would with a bin-packing score: each pod, in
// turn, on the node with the least free GPUs that holds it. All or none: it returns the nodes
// of the pods, or nil and changes nothing when some pod finds no node.
func (w *worker) place(pods, per int) []int {
	nodes := make([]int, 0, pods)
	for range pods {
		best := -1
		for i, f := range w.free {
			if f >= per && (best < 0 || f < w.free[best]) {
				best = i
				if f == per {
					break
				}
			}
		}
		if best < 0 {
			w.release(nodes, per)
			return nil
		}
		w.free[best] -= per
		nodes = append(nodes, best)
	}
	w.dirty = true
	return nodes
}

// release frees the pods' GPUs on their nodes.
func (w *worker) release(nodes []int, per int) {
	for _, n := range nodes {
		w.free[n] += per
	}
	w.dirty = true
}

// figures returns the worker's ResourceUsage as the resource-usage add-on writes it: per
// resource over every node and per model, with the cumulative FreeNodes distribution ("this
// many nodes have at least this much free", largest amount first, nodes with none left out).
// It is rebuilt only after the nodes changed.
func (w *worker) figures(now time.Time) *usagev1alpha1.ResourceUsage {
	if !w.dirty && w.usage != nil {
		return w.usage
	}
	per := w.spec.Model.PerNode
	exactly := make([]int32, per+1)
	total := 0
	for _, f := range w.free {
		exactly[f]++
		total += f
	}
	var dist []usagev1alpha1.NodesWithFree
	var atLeast int32
	for a := per; a > 0; a-- {
		if exactly[a] == 0 {
			continue
		}
		atLeast += exactly[a]
		dist = append(dist, usagev1alpha1.NodesWithFree{Free: *resource.NewQuantity(int64(a), resource.DecimalSI), Nodes: atLeast})
	}
	capacity := int64(w.spec.GPUs())
	fig := usagev1alpha1.ResourceFigures{
		Name:                   usagev1alpha1.ResourceNvidiaGPU,
		Capacity:               *resource.NewQuantity(capacity, resource.DecimalSI),
		Allocatable:            *resource.NewQuantity(capacity, resource.DecimalSI),
		Requested:              *resource.NewQuantity(capacity-int64(total), resource.DecimalSI),
		Free:                   *resource.NewQuantity(int64(total), resource.DecimalSI),
		LargestNodeAllocatable: *resource.NewQuantity(int64(per), resource.DecimalSI),
		FreeNodes:              dist,
	}
	byModel := fig
	byModel.Model = w.spec.Model.Name
	w.usage = &usagev1alpha1.ResourceUsage{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.spec.Name, Name: usagev1alpha1.ResourceUsageName},
		Status: usagev1alpha1.ResourceUsageStatus{
			ObservedTime: &metav1.Time{Time: now},
			Nodes:        int32(w.spec.Nodes),
			Resources:    []usagev1alpha1.ResourceFigures{fig, byModel},
		},
	}
	w.dirty = false
	return w.usage
}

// fits says whether pods of per GPUs fit on the nodes now, changing nothing: not even the
// figures' dirty mark, so that asking does not make figures rebuild them.
func (w *worker) fits(pods, per int) bool {
	dirty := w.dirty
	defer func() { w.dirty = dirty }()
	nodes := w.place(pods, per)
	if nodes == nil {
		return false
	}
	w.release(nodes, per)
	return true
}
