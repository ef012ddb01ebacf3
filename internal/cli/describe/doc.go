// Package describe is `flotilla describe`: one object on the hub as a reader needs it,
// kubectl-describe style.
//
// `flotilla describe work CLUSTER/NAME` prints a ManifestWork: the ManifestWorkReplicaSet that
// made it, its deleteOption and executor, its conditions, then each manifest of spec.workload
// (ordinal, kind, namespace/name) with the conditions and status feedback values the cluster's
// work agent reported for it in status.resourceStatus. A manifest is matched to its status by
// ordinal, as the agent reports it.
//
// `flotilla describe fl NAME [-n NS]` prints a FederatedLearning: its spec in brief (framework,
// images, rounds, minAvailableClients, the placement's cluster sets and data claim, the SuperLink
// and SuperNode for flower, the listeners and storage otherwise), then its status: phase and
// message (wrapped), conditions, clients, progress (metrics and the clusters of the last 10
// rounds), listeners and the last 20 timeline entries. Table cells longer than 100 characters are
// cut, and the output says so. A status the hub has not written yet prints as "no status yet".
//
// Printing is kept apart from reading: writeWork and writeFederatedLearning take the object and a
// clock and only write text.
package describe
