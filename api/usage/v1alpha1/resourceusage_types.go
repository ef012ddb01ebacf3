package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceUsageName is the name of the one ResourceUsage of a cluster, in its namespace.
const ResourceUsageName = "resource-usage"

// ResourceUsage is what one cluster has, uses and has free, per resource and per accelerator
// model. It has no spec: everything is status, written by the cluster's agent.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=ru
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Observed",type=date,JSONPath=`.status.observedTime`
// +kubebuilder:printcolumn:name="Valid Until",type=string,JSONPath=`.status.validUntil`
type ResourceUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Status is the cluster's figures.
	// +optional
	Status ResourceUsageStatus `json:"status,omitempty"`
}

// ResourceUsageStatus is a cluster's figures at one time.
type ResourceUsageStatus struct {
	// ObservedTime is when the figures were computed from the spoke's nodes and pods.
	// +optional
	ObservedTime *metav1.Time `json:"observedTime,omitempty"`

	// ValidUntil is when the figures expire: after it, placements treat the cluster as one whose
	// figures are unknown. The agent refreshes it well before; a cluster whose agent stopped loses
	// its figures instead of keeping stale ones.
	// +optional
	ValidUntil *metav1.Time `json:"validUntil,omitempty"`

	// Nodes is how many nodes were counted: Ready and schedulable ones.
	// +optional
	Nodes int32 `json:"nodes,omitempty"`

	// Resources are the figures of each resource, sorted by name and then model; a resource
	// counted per model has one entry without a model (every node) and one per model.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Resources []ResourceFigures `json:"resources,omitempty"`
}

// ResourceFigures are one resource's amounts in a cluster, over every counted node or over the
// nodes of one accelerator model.
type ResourceFigures struct {
	// Name is the resource, such as cpu, memory or nvidia.com/gpu.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Model is the accelerator model these figures count (the nodes' nvidia.com/gpu.product label
	// for nvidia.com/gpu), or empty for every node.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Model string `json:"model,omitempty"`

	// Capacity is the sum of the nodes' capacity.
	Capacity resource.Quantity `json:"capacity"`
	// Allocatable is the sum of the nodes' allocatable amount.
	Allocatable resource.Quantity `json:"allocatable"`
	// Requested is the sum of the requests of the pods bound to these nodes that have not
	// finished, counted as the scheduler counts them.
	Requested resource.Quantity `json:"requested"`
	// Free is the sum over the nodes of allocatable minus requested (never below zero on a node).
	Free resource.Quantity `json:"free"`

	// LargestNodeAllocatable is the largest allocatable amount of a single node.
	// +optional
	LargestNodeAllocatable resource.Quantity `json:"largestNodeAllocatable,omitempty"`

	// FreeNodes says how free capacity is spread over the nodes: each entry says that Nodes
	// nodes have at least Free free. Entries go from the largest amount down, one per amount that
	// occurs, so the first is the most free on one node. Amounts are rounded down (cpu to whole
	// cores, memory to GiB; on clusters with many different amounts, to fewer distinct values),
	// so the figures never promise more than there is. Nodes with nothing free are left out.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	FreeNodes []NodesWithFree `json:"freeNodes,omitempty"`

	// Nodes are each node's figures, in entries of an accelerator model only (the GPU map of the
	// dashboard draws them: which node has what free), sorted by node name. At most 5,000, the
	// most nodes Kubernetes supports in one cluster; beyond that the agent keeps the first 5,000.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5000
	Nodes []NodeFigures `json:"nodes,omitempty"`
}

// NodeFigures are one node's amounts of a resource.
type NodeFigures struct {
	// Name is the node's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Allocatable is the node's allocatable amount.
	Allocatable resource.Quantity `json:"allocatable"`
	// Requested is the sum of the requests of the unfinished pods bound to the node.
	Requested resource.Quantity `json:"requested"`
}

// NodesWithFree is a count of nodes that each have at least an amount free.
type NodesWithFree struct {
	// Free is the amount.
	Free resource.Quantity `json:"free"`
	// Nodes is how many nodes have at least Free free.
	// +kubebuilder:validation:Minimum=1
	Nodes int32 `json:"nodes"`
}

// ResourceUsageList is a list of ResourceUsages.
//
// +kubebuilder:object:root=true
type ResourceUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceUsage `json:"items"`
}
