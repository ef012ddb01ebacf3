// Package resourceusage is the hub's side of the built-in add-on resource-usage: it turns each
// cluster's ResourceUsage (usage.flotilla.io/v1alpha1, written by the cluster's agent) into OCM's
// AddOnPlacementScore resource-usage-score in the same namespace, so that placements written
// for OCM (an AddOn prioritizer on resource-usage-score/gpuClusterAvailable, or CEL's
// managedCluster.scores("resource-usage-score")) work unchanged.
//
// The scores are OCM's eight: cpuNodeAvailable, cpuClusterAvailable, memNodeAvailable,
// memClusterAvailable, gpuNodeAvailable, gpuClusterAvailable, tpuNodeAvailable and
// tpuClusterAvailable ("Node": the most free on one node; "Cluster": the cluster's free total).
// OCM's add-on normalises them against fixed maxima (100 cores, 1 TiB, 20 GPUs, 20 TPUs), so a
// cluster with 64 free GPUs scores the same as one with 20. Here they are normalised against the
// fleet: 200*free/max - 100, where max is the largest allocatable amount of any cluster of the
// fleet (Cluster scores) or of any node of the fleet (Node scores), so a score of 100 means "as
// much free as the biggest cluster (node) has in all", and scores compare across the fleet. The
// maxima move only when the fleet's allocatable does (clusters or nodes joining or going), not
// when pods come and go, so a pod starting rewrites its own cluster's score and no other; when
// the maxima do move, every cluster's score is rewritten (each cluster's share of the maxima is
// kept in memory, so a change costs a pass over that small table, not over the fleet's figures).
// Nothing free, or a resource the fleet lacks, scores -100.
//
// Since one cluster's figures move every other cluster's scores, only trusted figures count: a
// ResourceUsage in a namespace that is no accepted cluster's (a ManagedCluster of that name with
// spec.hubAcceptsClient, whose Namespace the hub made for it) is ignored, and an implausible one
// (allocatable above capacity, free above allocatable, a node above the cap per node: 64 GPUs or
// TPUs by default, hub flag --resource-usage-max-accelerators-per-node, 4096 cores, 64 TiB; or
// the cluster above status.nodes times that cap) is left out of the maxima, gets no score, and
// is flagged by a Warning event ImplausibleResourceUsage naming the cluster, the field and the fix.
//
// The score expires with the figures (validUntil is the ResourceUsage's), is written only when
// it changes, and is deleted with its ResourceUsage. The hub writes and deletes only a score that
// carries its label addon.flotilla.io/built-in=resource-usage; one written by another scorer is
// left alone, and the refusal logged.
//
// Two writers of one score (conflict.go): OCM's resource-usage-collect add-on writes the same
// object from the spoke. The hub writes with its own field manager (FieldManager) and stops
// writing, and never deletes, a score whose managedFields show another manager writing its
// status, and it writes nothing while a ManagedClusterAddOn resource-usage-collect exists in the
// namespace. It says so on its add-on: condition ScoreConflict on the ManagedClusterAddOn
// resource-usage, naming the other writer and the fix (False once the hub is the only writer
// again).
package resourceusage
