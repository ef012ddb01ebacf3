// Package workloadfit decides whether a Kueue Workload's pods fit a worker cluster, from the
// cluster's live figures (usage.flotilla.io ResourceUsage). The hub's MultiKueue dispatcher
// (internal/hub/kueue) offers a workload only to workers where it fits, and `flotilla explain
// workload` (internal/hub/fleetview) shows the same verdicts with their numbers: one function
// decides for both.
//
// A workload asks, per extended resource (nvidia.com/gpu, google.com/tpu, any other) and
// accelerator model, for a gang (gpufit.Gang): every pod of its pod sets on some node with that
// much free. Gangs reads them from the workload; Judge checks them against one worker's figures.
// cpu and memory are left to Kueue on the worker: the figures count them per node, but not
// together with the accelerators of the same node, so a check on them would add nothing exact.
package workloadfit
