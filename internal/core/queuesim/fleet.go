package queuesim

import "fmt"

// Model is a GPU model and how many of its GPUs a node has.
type Model struct {
	Name    string
	PerNode int
}

// The models of the simulated fleets, named by their nvidia.com/gpu.product label.
var (
	H100 = Model{Name: "NVIDIA-H100-80GB-HBM3", PerNode: 8}
	A100 = Model{Name: "NVIDIA-A100-SXM4-80GB", PerNode: 8}
	T4   = Model{Name: "Tesla-T4", PerNode: 4}
)

// WorkerSpec is one worker cluster: Nodes nodes of one model.
type WorkerSpec struct {
	Name  string
	Model Model
	Nodes int
}

// GPUs is the worker's GPU total.
func (w WorkerSpec) GPUs() int { return w.Nodes * w.Model.PerNode }

// Fleet is the workers, in the fixed order MultiKueue's config lists them.
type Fleet []WorkerSpec

// SmallFleet is three workers like the local fleet's (gpu-east, gpu-west, edge-1), eight nodes
// each: 64 H100, 64 A100 and 32 T4 GPUs.
func SmallFleet() Fleet {
	return Fleet{
		{Name: "gpu-east", Model: H100, Nodes: 8},
		{Name: "gpu-west", Model: A100, Nodes: 8},
		{Name: "edge-1", Model: T4, Nodes: 8},
	}
}

// LargeFleet is 20 workers of 100 nodes, models interleaved two H100, two A100, one T4: 6,400
// H100, 6,400 A100 and 1,600 T4 GPUs.
func LargeFleet() Fleet {
	var f Fleet
	for i := range 20 {
		m := []Model{H100, H100, A100, A100, T4}[i%5]
		f = append(f, WorkerSpec{Name: fmt.Sprintf("worker-%02d", i), Model: m, Nodes: 100})
	}
	return f
}

// GPUs is the fleet's GPU total.
func (f Fleet) GPUs() int {
	n := 0
	for _, w := range f {
		n += w.GPUs()
	}
	return n
}

// Models are the fleet's models in the order of their first worker: the hub's flavor order.
func (f Fleet) Models() []Model {
	var out []Model
	seen := map[string]bool{}
	for _, w := range f {
		if !seen[w.Model.Name] {
			seen[w.Model.Name] = true
			out = append(out, w.Model)
		}
	}
	return out
}

// Capacity is the fleet's GPUs per model.
func (f Fleet) Capacity() map[string]float64 {
	out := map[string]float64{}
	for _, w := range f {
		out[w.Model.Name] += float64(w.GPUs())
	}
	return out
}

// GPUsOf is the fleet's GPUs of the model.
func (f Fleet) GPUsOf(model string) int {
	n := 0
	for _, w := range f {
		if w.Model.Name == model {
			n += w.GPUs()
		}
	}
	return n
}

// Holds reports whether some worker of the model could run the job alone, when idle.
func (f Fleet) Holds(model Model, pods, perPod int) bool {
	if perPod > model.PerNode {
		return false
	}
	perNode := model.PerNode / perPod
	for _, w := range f {
		if w.Model.Name == model.Name && w.Nodes*perNode >= pods {
			return true
		}
	}
	return false
}

// Validate checks the fleet: named, unique, nodes and GPUs per node above zero.
func (f Fleet) Validate() error {
	if len(f) == 0 {
		return fmt.Errorf("fleet has no workers: give at least one WorkerSpec")
	}
	seen := map[string]bool{}
	for i, w := range f {
		switch {
		case w.Name == "":
			return fmt.Errorf("fleet[%d].Name is empty: name the worker", i)
		case seen[w.Name]:
			return fmt.Errorf("fleet[%d].Name %q is used twice: names must be unique", i, w.Name)
		case w.Nodes <= 0:
			return fmt.Errorf("worker %s: Nodes is %d: give at least 1", w.Name, w.Nodes)
		case w.Model.Name == "" || w.Model.PerNode <= 0:
			return fmt.Errorf("worker %s: Model %+v: give a model name and PerNode above 0", w.Name, w.Model)
		}
		seen[w.Name] = true
	}
	return nil
}
