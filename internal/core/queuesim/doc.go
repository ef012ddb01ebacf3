// Package queuesim replays one synthetic GPU workload through two fleet-wide queueing policies on
// one simulated heterogeneous fleet, and measures how well each schedules: GPU utilization,
// queueing delay, job completion time, makespan, fairness between teams, jobs admitted on a
// worker whose pods then could not all start, and the wall-clock cost of each dispatch decision.
//
// The policies:
//
//   - MultiKueueDefaults: one hub ClusterQueue whose quota is the sum of the workers', strict
//     FIFO over all teams (BestEffortFIFO), and AllAtOnce dispatch: the first worker (in fixed
//     order) whose own Kueue quota has room admits the job, without looking at its nodes; a job
//     whose pods do not all fit on the nodes then holds that quota until they do.
//   - Flotilla: the hub's quota is the fleet's per model, teams are admitted by fair sharing
//     (the team with the least GPUs held per unit of weight first), and each admitted job is
//     offered to the first worker where workloadfit.Judge says its gangs fit, the very functions
//     the hub's dispatcher (internal/hub/kueue) calls, on a ResourceUsage status built from the
//     simulated nodes as the resource-usage add-on builds it. A job that fits no worker waits on
//     the hub.
//
// Two variants of the hub's admission can be switched on to compare (Options.NodeAware: admit
// only what some worker's nodes hold now; Options.Reserve: a starving job holds its model's
// quota against later jobs); neither is built in the real hub.
//
// Two references put a run in proportion: Bound, what no policy can beat on a trace and fleet
// (makespan, utilization, mean JCT), and FairShares, the GPUs weighted max-min fairness gives
// each team from its demand, against which Result.FairnessToIdeal measures a run's shares.
//
// Everything is deterministic from the trace's seed: time is simulated by an event loop (no
// clock, no goroutines). Only the decision latencies are wall-clock measurements.
package queuesim
