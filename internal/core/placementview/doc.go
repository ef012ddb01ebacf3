// Package placementview is what `flotilla placement simulate`, `flotilla explain placement` and
// the hub's explanation server (internal/hub/explain) share, so it lives outside both internal/cli
// and internal/hub (hub code does not build in the CLI): the one way to build a
// scheduler.Snapshot from a fleet's objects (SnapshotFrom, so a simulation and an explanation of
// the same objects agree), the JSON form of a scheduler.Result (Output, with exactly the fields
// the CLI documents, never the core's own JSON), and the table that explains every cluster
// (WriteTable).
//
// Simulate reads the objects from files; `flotilla explain` and the hub's explanation server list
// them from the hub with ListFleet, the package's only API calls. All hand them here as Objects.
package placementview
