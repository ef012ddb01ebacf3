package fleet

import "k8s.io/apimachinery/pkg/api/resource"

// APIVersion and Kind identify a fleet file.
const (
	APIVersion = "dev.flotilla.io/v1alpha1"
	Kind       = "Fleet"
)

// Fleet is a fleet file: the spoke clusters of a local fleet. The hub is always there and is not
// listed.
type Fleet struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Clusters   []Cluster `json:"clusters"`
	// With names extra components that run on the hub and every spoke, as local processes:
	// "kueue" (Kueue's manager, with its CRDs and webhooks). `flotilla dev up --with` adds to it.
	With []string `json:"with,omitempty"`
	// RealNodes gives the hub and every cluster one real node (a kubelet and containerd in a
	// network namespace of its own, internal/local/realnode) beside the simulated ones; it needs
	// root, containerd, runc and the CNI plugins. `flotilla dev up --real-nodes` sets it too.
	RealNodes bool `json:"realNodes,omitempty"`
}

// Components that a fleet's With can name.
const (
	WithKueue = "kueue"
)

// KnownWith lists the components With accepts.
var KnownWith = []string{WithKueue}

// Has reports whether the fleet runs component c (With).
func (f *Fleet) Has(c string) bool {
	for _, w := range f.With {
		if w == c {
			return true
		}
	}
	return false
}

// Cluster is one spoke cluster.
type Cluster struct {
	// Name is the cluster's name, a DNS label; "hub" is taken.
	Name string `json:"name"`
	// Labels become the ManagedCluster's labels once the cluster registers.
	Labels map[string]string `json:"labels,omitempty"`
	// Claims become ClusterClaims on the spoke (name: value).
	Claims map[string]string `json:"claims,omitempty"`
	// NodePools are the cluster's simulated nodes.
	NodePools []NodePool `json:"nodePools,omitempty"`
}

// NodePool is a group of identical simulated nodes.
type NodePool struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	// GPU is absent for CPU-only nodes.
	GPU *GPU `json:"gpu,omitempty"`
	// CPU and Memory are each node's capacity; DefaultCPU and DefaultMemory when empty.
	CPU    *resource.Quantity `json:"cpu,omitempty"`
	Memory *resource.Quantity `json:"memory,omitempty"`
	Labels map[string]string  `json:"labels,omitempty"`
}

// GPU is the accelerator of each node in a pool.
type GPU struct {
	// Model is the nvidia.com/gpu.product label value, for example NVIDIA-H100-80GB-HBM3.
	Model string `json:"model"`
	// Count is the number of GPUs per node (nvidia.com/gpu capacity).
	Count int `json:"count"`
}

// Defaults for node pools that leave CPU or memory out.
var (
	DefaultCPU    = resource.MustParse("64")
	DefaultMemory = resource.MustParse("512Gi")
)

// Limits that keep a local fleet within what one machine runs.
const (
	MaxClusters      = 20
	MaxNodesPerPool  = 500
	MaxGPUsPerNode   = 64
	MaxClaims        = 20
	MaxClaimValueLen = 1024
)
