// Package gpufit is GPU fit in placement: it reads each cluster's ResourceUsage
// (usage.flotilla.io, written by the cluster's resource-usage add-on) through
// framework.Handle.ResourceUsage, and gives
//
//   - the filter GPUFit, active when the Placement has the annotation placement.flotilla.io/gpu
//     (Annotation), such as "model=NVIDIA-H100-80GB-HBM3,perNode=8,nodes=4" or "total=32": a
//     cluster passes when it has nodes of the model, at least total free in all, and at least
//     nodes nodes with perNode free each (gang fit: a cluster whose total is enough still fails
//     when too few of its nodes have enough, and its explanation says so with the numbers);
//   - the prioritizers GPUFree (the most free of the annotation's resource and model, by default
//     nvidia.com/gpu of any model) and GPUBinPack (the tightest fit: the smallest node that fits
//     perNode leaves the least spare, then the least free in all), min-max normalised to
//     -100..100 as the ResourceAllocatable prioritizers are;
//   - Fit, Lookup and the figures' accessors, which the CEL functions of plugins/predicate
//     (managedCluster.freeGPUs, nodesWithFreeGPUs, gpuFit, nodesWithFree) call, so that a CEL
//     expression and the filter decide with one function.
//
// Figures that are missing, or expired (status.validUntil past), count as unknown: the filter
// rejects the cluster, the prioritizers score it 0 with a warning, and CEL gives an evaluation
// error; each says which and how to fix it. While a cluster's figures are valid, the filter asks
// to be scheduled again when they expire (Status.RequeueAfter), so that a cluster whose agent
// stopped does not keep its place.
package gpufit
