// Package placement tests the hub's placement controller (internal/hub/placement) against a real
// hub API server, with the hub running in the test process as a service account bound only to its
// generated roles (config/rbac, testenv.HubIdentity), so the tests also show that those roles are
// enough. Each test makes its own cluster set, bound into a namespace of its own, and
// ManagedClusters labeled into it; it checks the PlacementDecisions (names, labels, owner,
// groups), the Placement's status and conditions, bad input, the disable annotation, and, with a
// watch on the decisions of a 250-cluster placement whose membership changes, that no
// still-selected cluster ever disappears from all of its PlacementDecisions.
package placement
