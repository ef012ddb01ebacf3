// Package describe is `flotilla describe work CLUSTER/NAME`: one ManifestWork on the hub as a
// reader needs it, kubectl-describe style: the ManifestWorkReplicaSet that made it, its
// deleteOption and executor, its conditions, then each manifest of spec.workload (ordinal, kind,
// namespace/name) with the conditions and status feedback values the cluster's work agent
// reported for it in status.resourceStatus.
//
// A manifest is matched to its status by ordinal, as the agent reports it. Printing is kept apart
// from reading: writeWork takes the object and a clock and only writes text.
package describe
