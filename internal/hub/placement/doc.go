// Package placement is the hub's placement controller: for each Placement it builds a
// scheduler.Snapshot from the manager's cache (ManagedClusters, ManagedClusterSets, bindings,
// AddOnPlacementScores, ResourceUsages) and from an index of every PlacementDecision kept by the controller's
// watch (index.go: each placement's decisions and every cluster's count of placements, derived
// with scheduler.DecisionInputs one placement at a time, so that a reconcile does not walk the
// hub's PlacementDecisions; a test checks it against DecisionInputs over all of them), runs the
// scheduling core (internal/core/scheduler) with the hub's clock, and writes the Result: the
// PlacementDecisions (OCM's names <placement>-decision-<N> and labels, controlled by the
// Placement, decisions in the status subresource), the Placement's status
// (numberOfSelectedClusters, decisionGroups, PlacementSatisfied and PlacementMisconfigured with
// ObservedGeneration; written only when it changes) and one DecisionsUpdated event per later
// change of the selected clusters (none for the first decisions: events are writes too);
// status.lastScoreUpdateTime is what the core says (spec.scoreRateLimit,
// with Snapshot.CurrentScores from scheduler.CurrentClusterDecisions). A misconfigured placement
// keeps the decisions it has. The annotation
// cluster.open-cluster-management.io/experimental-scheduling-disable: "true" leaves a placement
// alone. A toleration that expires requeues the placement at its expiry (Result.RequeueAfter).
//
// The fleet part of the snapshot (fleet.go) is listed once and shared by every reconcile until an
// event on a cluster, set, binding, score or ResourceUsage marks it stale, and the core schedules
// briefly (scheduler.Scheduler.Brief: the decisions and their reasons, not every cluster's explanation,
// which flotilla explain computes on demand). The figures are in bench/README.md.
//
// Three ideas:
//
//   - No still-selected cluster ever vanishes from all of a placement's PlacementDecisions, even
//     between two writes (OCM rewrites slices one by one and consumers briefly see clusters go).
//     The CRD caps a PlacementDecision at 100 decisions, so "old plus new, then final" cannot be
//     written into a full slice; Plan instead writes each slice's final content once every
//     still-selected cluster it drops is held elsewhere, parks clusters in a spare
//     PlacementDecision when slices wait on each other in a cycle, and deletes surplus and spare
//     slices last. Before it rewrites decisions, the controller reads them from the API server
//     rather than the cache, so that a plan never starts from a state older than our last write
//     (a placement the cache shows without decisions is planned from the cache: that plan only
//     creates, and a create fails on an object that exists).
//
//   - A change re-evaluates only the placements it can affect (mapping.go): a ManagedCluster (or
//     an AddOnPlacementScore in its namespace) maps to the placements in namespaces with a binding
//     to a set holding it before or after the change (set membership by internal/hub/clusterset,
//     the rule the scheduler applies) and whose spec.clusterSets allow that set; its
//     ResourceUsage maps to those of them that read ResourceUsages (the GPU annotation, GPU
//     prioritizers or CEL GPU functions: scheduler.FieldResourceUsage); a set maps to
//     the placements bound to it; a binding to the placements of its namespace; a
//     PlacementDecision to the Placement controlling it. Cluster updates that cannot change a
//     decision (conditions, versions) are dropped, and of the placements that can see the
//     cluster, an update requeues only those that read a field that changed
//     (scheduler.FieldsRead), unless it changed the cluster's taints, deletion or sets. The
//     workqueue merges a burst into one reconcile per placement; the initial list at start
//     queues only the placements themselves.
//
//   - The controller's own PlacementDecision writes do not reschedule their placement
//     (ownwrites.go: each write is recorded before it is sent, and the watch event it causes is
//     recognized by content). Otherwise, with Balance (scores that follow the other placements'
//     decisions), each write would requeue its placement, the next run would often decide
//     differently, and a fleet of placements would never settle.
package placement
