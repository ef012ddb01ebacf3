// Package resourceusage is the built-in add-on resource-usage: on a cluster whose
// ManagedClusterAddOn resource-usage exists, the agent writes OCM's AddOnPlacementScore
// resource-usage-score in the cluster's namespace on the hub, so that OCM placements that rank
// clusters by free CPU, memory, GPU or TPU work unchanged.
//
// The scores are OCM's eight (cpuNodeAvailable, cpuClusterAvailable, memNodeAvailable,
// memClusterAvailable, gpuNodeAvailable, gpuClusterAvailable, tpuNodeAvailable,
// tpuClusterAvailable). "Free" is a schedulable node's allocatable minus the requests of the pods
// bound to it that have not finished (k8s.io/component-helpers' PodRequests: init containers,
// sidecars and overhead counted as the scheduler counts them); "Node" is the best single node,
// "Cluster" the sum. Each is normalised to -100..100 against OCM's fixed maxima (100 cores,
// 1 TiB, 20 GPUs, 20 TPUs): 200*free/max - 100, at most 100, and -100 when nothing is free.
//
// Nodes and pods are watched (informers on the spoke, pods trimmed to what the scores need); the
// score is written when the add-on starts and then every Interval (OCM: 60 s), with validUntil
// three intervals ahead, so that the scores of a cluster whose agent stopped expire instead of
// living on. When the add-on is switched off the agent deletes the score it wrote (and only one that
// carries its label).
package resourceusage
