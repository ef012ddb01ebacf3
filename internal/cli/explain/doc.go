// Package explain is `flotilla explain placement NS/NAME` and `flotilla explain workload NS/NAME`
// (fleetview.ExplainWorkload: why a Kueue Workload on the hub waits, docs/kueue.md). For a
// placement it reads the placement and the fleet
// from the hub (the ManagedClusters, the ManagedClusterSets, the namespace's
// ManagedClusterSetBindings, the AddOnPlacementScores, the ResourceUsages and every
// PlacementDecision), builds the snapshot with placementview.SnapshotFrom as
// `flotilla placement simulate` does, runs the hub's scheduling core on it, and prints why every cluster of the eligible sets was selected,
// filtered or not chosen.
//
// The explanation is computed now, by the CLI, from what the hub holds: when the placement
// controller has not caught up with a change, the decisions it prints can differ from the
// PlacementDecisions on the hub, and the command says so.
//
// With --via-hub https://HOST:PORT (and -o json) the command instead asks the hub's explanation
// server (internal/hub/explain, `flotilla hub --explain-bind-address`), which computes the same
// JSON from the hub's cache and answers only callers the API server authenticates by their bearer
// token and allows to get the placement. Computing here stays the default: the server's address
// and certificate authority are not discoverable from a kubeconfig.
package explain
