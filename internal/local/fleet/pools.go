package fleet

import "github.com/flotilla/flotilla/internal/local/localk8s"

// LocalNodePool turns a pool of the fleet file into the nodes localk8s creates.
func (np NodePool) LocalNodePool() localk8s.NodePool {
	out := localk8s.NodePool{Name: np.Name, Count: np.Count, CPU: DefaultCPU, Memory: DefaultMemory, Labels: np.Labels}
	if np.CPU != nil {
		out.CPU = *np.CPU
	}
	if np.Memory != nil {
		out.Memory = *np.Memory
	}
	if np.GPU != nil {
		out.GPUModel, out.GPUs = np.GPU.Model, np.GPU.Count
	}
	return out
}
