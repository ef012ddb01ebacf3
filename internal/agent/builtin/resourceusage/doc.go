// Package resourceusage is the built-in add-on resource-usage: on a cluster whose
// ManagedClusterAddOn resource-usage exists, the agent keeps the cluster's ResourceUsage
// (usage.flotilla.io/v1alpha1) up to date in the cluster's namespace on the hub. The hub turns
// the ResourceUsages of the fleet into OCM's AddOnPlacementScore resource-usage-score
// (internal/hub/resourceusage), and the scheduler's GPU fit reads them directly.
//
// For every resource of the nodes' allocatable (cpu, memory, pods, nvidia.com/gpu,
// google.com/tpu, any extended resource) it gives the capacity, allocatable, requested and free
// amounts of the cluster, the largest allocatable of one node, and FreeNodes: how many nodes have
// at least k free, for the amounts k that occur (rounded down: whole cores, GiB; at most 64
// entries however many nodes). Accelerators are also counted per model (the node labels in
// usagev1alpha1.ModelLabels). Only Ready, schedulable nodes count. "Requested" is the requests
// of the pods bound to a node that have not finished, summed as the scheduler sums them
// (k8s.io/component-helpers' PodRequests: init containers, sidecars and overhead); "free" is a
// node's allocatable minus that, never below zero.
//
// Nodes and pods are watched, never polled: reflectors feed a tally directly (tallyStore), with
// no informer cache beside it. A pod is kept as a small record (its node and its summed
// requests, podRecord), and the tally holds each node's requested amounts, updated by every
// event, so computing the figures costs a pass over the nodes, not over the pods. After the first
// list the add-on returns that list's garbage to the OS. The figures are written a Debounce (1 s) after a change, all the
// changes of that second together, and only when they differ from what was written, or when a
// third of their validity (three Intervals, 60 s each) has passed: a cluster whose agent stopped
// loses its figures when validUntil passes instead of keeping stale ones.
//
// The add-on writes only a ResourceUsage it created (labeled addon.flotilla.io/built-in=
// resource-usage); when it is switched off the agent deletes that one.
package resourceusage
