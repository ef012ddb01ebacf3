// Package fleetview turns the hub's objects into the reports that both `flotilla mcp`
// (internal/hub/mcpserver) and `flotilla dashboard` (internal/hub/dashboard) serve: clusters with their
// availability, heartbeat, sets and claims; GPU capacity per model, cluster and node; placements
// with their decisions; ManifestWorks per cluster; Kueue Workloads. It reads nothing itself: the
// callers list the objects with the viewer's identity and pass them in, so what a report holds is
// what the viewer may read. ExplainWorkload (why a Workload waits, also `flotilla explain
// workload`) needs many objects and reads them itself, through the reader the caller gives it,
// with the viewer's identity too, as does ReadQueues (each FleetQueue's teams: GPUs held, demand
// and fair share per model, TeamFairShares on queuesim's allocation, and the head of each team's
// queue).
package fleetview
