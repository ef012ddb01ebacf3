// Package v1alpha1 is usage.flotilla.io/v1alpha1, Flotilla's own API for what a cluster has free:
// ResourceUsage, one per cluster in the cluster's namespace on the hub, written by the built-in
// add-on resource-usage (internal/agent/builtin/resourceusage) from the spoke's nodes and pods.
//
// For every resource the cluster's nodes offer (cpu, memory, nvidia.com/gpu, google.com/tpu, any
// extended resource) it holds the capacity, allocatable, requested and free amounts of the
// cluster, and how free capacity is spread over the nodes: FreeNodes says how many nodes have at
// least k free, for the amounts k that occur. Accelerators are also counted per model (the node
// label nvidia.com/gpu.product for NVIDIA GPUs, cloud.google.com/gke-tpu-accelerator for TPUs),
// so that a placement can ask for "8 free NVIDIA-H100-80GB-HBM3 on one node" and learn why a
// cluster with 16 free in total still does not fit.
//
// The hub turns ResourceUsages into OCM's AddOnPlacementScore resource-usage-score, normalised
// across the fleet (internal/hub/resourceusage), and the scheduler's GPU fit plugin reads them
// directly (internal/core/scheduler/plugins/gpufit).
//
// +kubebuilder:object:generate=true
// +groupName=usage.flotilla.io
package v1alpha1
