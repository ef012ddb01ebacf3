// Package sigdecision tests the hub's mirror of placements' decisions into SIG Multicluster
// (KEP-5313) PlacementDecisions against a real hub API server, with the whole hub running as its
// generated roles: the SIG slices' names, labels, schedulerName, ClusterProfile references,
// reasons and order follow the OCM PlacementDecisions through changes; no still-selected cluster
// vanishes from them during an update; SIG PlacementDecisions the hub does not control are left
// alone; and with the flag off nothing is written.
package sigdecision
