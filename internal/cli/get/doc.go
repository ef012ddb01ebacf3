// Package get is `flotilla get`: kubectl-style tables, or YAML and JSON, of a hub's
// ManagedClusters, ManagedClusterSets, ManagedClusterSetBindings, Placements, ManifestWorks,
// ManagedClusterAddOns and FederatedLearnings (a cluster's works and add-ons are in the namespace
// named after it, so -c CLUSTER is -n CLUSTER). -o wide adds columns for the kinds that have more
// to say (FederatedLearnings: their message).
//
// Printing is kept apart from fetching. The print functions take a typed list and a clock and
// only write text, so tests print fixed objects at a fixed time; fetching reads the hub through a
// controller-runtime client made by a constructor the command is given, so tests run the whole
// command against a fake client.
package get
