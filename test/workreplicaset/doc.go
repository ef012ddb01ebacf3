// Package workreplicaset tests the hub's ManifestWorkReplicaSet controller
// (internal/hub/workreplicaset) against a real hub API server, with the whole hub running in the
// test process as its generated roles (testenv.HubIdentity), and real Placements scheduled by the
// hub's placement controller. There are no spokes: the tests play the work agents by writing the
// ManifestWorks' status conditions. They cover the All and Progressive strategies (a failing
// cluster against maxFailures and progressDeadline), following decision changes, cascade deletion
// (Background and Foreground) that spares hand-made ManifestWorks carrying the set's label, and
// a missing Placement.
package workreplicaset
