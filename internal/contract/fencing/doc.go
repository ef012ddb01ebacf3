// Package fencing is what the hub and the agents share about fencing: the durations a cluster
// runs under (Timing, written by the hub into the ManagedCluster's annotations and read by its
// agent), the epoch the hub bumps each time it declares a cluster lost, the marks on a ManifestWork
// and on spoke objects that say a workload is fenced, and how a fenced workload is stopped and
// started again (Stop, Resume) with what it was recorded on the object itself.
//
// A workload is fenced when it must not run twice at once: a training Job that writes
// checkpoints. Such a workload on a cluster cut off from the hub is stopped by the cluster's agent
// F seconds after its last lease renewal (internal/agent/fence), before the hub declares the
// cluster lost at L seconds and lets the workload start elsewhere (internal/hub/failover). Which
// workloads are fenced:
//
//   - every object a ManifestWork annotated failover.flotilla.io/fenced: "true" applies (the work
//     agent labels them LabelFenced);
//   - every Job and JobSet that MultiKueue created on the cluster (label
//     kueue.x-k8s.io/multikueue-origin).
//
// A workload that must not stop for a hub outage, such as inference serving, is not fenced
// unless its ManifestWork asks for it.
package fencing
