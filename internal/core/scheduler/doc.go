// Package scheduler is Flotilla's placement scheduling core: given a Placement, a Snapshot of the
// fleet (clusters, sets, bindings, AddOnPlacementScores, ResourceUsages, this placement's current
// decisions and other placements' decision counts) and the time, it returns a Result: the decisions, the
// decision groups and their PlacementDecision slices, the conditions PlacementSatisfied and
// PlacementMisconfigured, when to schedule again, and an explanation for every member of the
// eligible cluster sets. It makes no API calls and reads time from its caller (an injected
// clock.PassiveClock in Scheduler), so the controller, the explain endpoint, the simulator and the
// benchmarks all run this same code.
//
// The pipeline is OCM's (the OCM semantics reference, section 3):
//  1. candidates (plugins/clusterset): members of the sets bound to the placement's namespace and
//     named in spec.clusterSets, minus clusters being deleted;
//  2. filters, in Plugins.Filters order (plugins/predicate: labels, claims and CEL, then
//     plugins/tainttoleration, then plugins/gpufit when the placement has the
//     placement.flotilla.io/gpu annotation); the first that rejects a cluster is named in its
//     explanation; a filter may demote a cluster instead (an untolerated PreferNoSelect taint) so
//     that it ranks after every cluster not demoted; when none passes, a filter that is a
//     framework.NoMatchExplainer may add to PlacementSatisfied's message what none of them has
//     (a GPU model nobody has, and the models they do have);
//  3. prioritizers from spec.prioritizerPolicy (Additive implies Steady and Balance, weight 1),
//     each looked up by name in Plugins.Prioritizers; total = sum(weight * score);
//  4. rank by (demoted, total desc, name asc) and choose spec.numberOfClusters, with the select
//     plugins in Plugins.Selectors (plugins/spread: spec.spreadPolicy) taking part: each pick is
//     the best-ranked cluster they all admit, and slots left are filled, in rank order, with
//     clusters they refused only softly (ScheduleAnyway); every refusal is explained;
//  5. the decide plugins in Plugins.Deciders (plugins/scoreratelimit: spec.scoreRateLimit) may
//     hold back a change of scores alone, keeping the current decisions' scores and reasons;
//  6. decision groups (named groups first, then the rest, split by clustersPerDecisionGroup, by
//     name), each ordered by the OrderPlugin that spec.sortBy names in Plugins.Orders
//     (plugins/sortby), and PlacementDecision slices of at most 100.
//
// What OCM declares but does not do is done here: spreadPolicy, the Spread prioritizer, sortBy
// and scoreRateLimit; each plugin's doc says how. scoreRateLimit needs two inputs from the caller:
// Snapshot.CurrentScores (CurrentClusterDecisions) and status.lastScoreUpdateTime, which the
// caller writes from Result.LastScoreUpdateTime.
//
// Speed: a Snapshot caches what every placement scheduled against it shares (the
// AddOnPlacementScore and ResourceUsage indexes, each cluster's unstructured form for CEL, the members of each
// combination of eligible sets, and the per-cluster tables plugins ask for with
// Handle.PerCluster, such as allocatable amounts and add-on scores); Snapshot.ForPlacement gives
// another placement's view of the same fleet without copying it. Ranking sorts packed integer
// keys. A Scheduler with Brief set (the controller's) explains the decisions only: the first
// numberOfClusters are selected with a heap instead of sorting all, its per-cluster arrays come
// from a pool, and Result.Clusters is nil; it decides exactly what the full scheduling decides
// (TestBriefMatchesFull, and every golden case). FieldsRead says which cluster fields a
// placement reads, so that the controller reschedules it only when one of them changes; a plugin
// that reads a new field must be described there. BenchmarkSchedule (10,000 clusters) reports
// cluster evaluations per second, of wall clock and of CPU.
//
// A placement the scheduler cannot act on (an unknown built-in prioritizer, an AddOn coordinate
// without addOn, a bad selector, a CEL expression that does not compile to a bool) gives
// PlacementMisconfigured=True naming the field, and no decisions: the caller keeps the ones there
// are. Schedule is per placement, so one bad placement never affects another.
//
// To add a plugin: write a package under plugins/<name> with `const Name`, a compile-time check
// such as `var _ framework.ScorePlugin = &X{}`, and `New(framework.Handle, framework.Args)`; then add
// it to DefaultPlugins. The core never switches on plugin names.
//
// Golden cases live in testdata/*.yaml (input, then the expected output after a marker line);
// `go test ./internal/core/scheduler/ -update` rewrites the expected halves for review as a diff.
package scheduler
