package v1alpha1

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Accelerator resources and the node labels that name their model.
const (
	ResourceNvidiaGPU = "nvidia.com/gpu"
	ResourceGoogleTPU = "google.com/tpu"
	// LabelNvidiaGPUProduct is set on nodes by NVIDIA GPU feature discovery.
	LabelNvidiaGPUProduct = "nvidia.com/gpu.product"
	// LabelGoogleTPUAccelerator is set on TPU nodes by GKE.
	LabelGoogleTPUAccelerator = "cloud.google.com/gke-tpu-accelerator"
)

// ModelLabels maps an accelerator resource to the node label that names its model; figures of
// these resources are also given per model.
var ModelLabels = map[string]string{
	ResourceNvidiaGPU: LabelNvidiaGPUProduct,
	ResourceGoogleTPU: LabelGoogleTPUAccelerator,
}

// Figures returns the figures of the resource over the nodes of the model ("" for every node),
// or nil when the cluster has none.
func (s *ResourceUsageStatus) Figures(name, model string) *ResourceFigures {
	for i := range s.Resources {
		if r := &s.Resources[i]; r.Name == name && r.Model == model {
			return r
		}
	}
	return nil
}

// Valid reports whether the figures may be used at now: they were written and have not expired.
func (s *ResourceUsageStatus) Valid(now time.Time) bool {
	return s.ObservedTime != nil && (s.ValidUntil == nil || now.Before(s.ValidUntil.Time))
}

// NodesWithAtLeast returns how many nodes have at least amount free.
func (f *ResourceFigures) NodesWithAtLeast(amount resource.Quantity) int32 {
	var n int32
	// Entries go from the largest amount down, and the count of each includes the larger ones.
	for _, e := range f.FreeNodes {
		if e.Free.Cmp(amount) < 0 {
			break
		}
		n = e.Nodes
	}
	return n
}

// MostFreeOnANode returns the most free on one node (zero when no node has any free).
func (f *ResourceFigures) MostFreeOnANode() resource.Quantity {
	if len(f.FreeNodes) == 0 {
		return resource.Quantity{}
	}
	return f.FreeNodes[0].Free
}
