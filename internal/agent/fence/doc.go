// Package fence is the agent's fence: when the cluster's agent has not renewed its lease with
// the hub for the FenceAfter of its Timing (internal/contract/fencing, set by the hub on the
// ManagedCluster), it stops the cluster's fenced workloads, before the hub declares the cluster
// lost at LostAfter and lets them start elsewhere.
//
// The Fencer is a loop of the agent (loop.Loop) that looks once a second:
//
//   - raised: FenceAfter after the last renewal the hub took (registration.Agent.LastRenewed,
//     by the agent's clock, which stamped it), every fenced workload is stopped (Jobs and
//     JobSets suspended, Deployments, StatefulSets and ReplicaSets scaled to zero), with what it
//     changed recorded on the object (fencing.Stop) and an Event beside it. While raised, the
//     work agent applies no fenced work (Fenced), and new fenced objects are stopped too.
//     A look works in parallel and in an order: every Kueue Workload is deactivated first (Kueue
//     would start a suspended Job again while its Workload stays admitted), then the other
//     objects are stopped, then the pods of every suspended Job and JobSet are deleted with a
//     grace period that ends before LostAfter (two lists of the spoke find them, however many
//     Jobs there are). A Job whose Workload it deactivated is left to Kueue until Kueue has
//     evicted the Workload (Kueue then suspends it), for up to kueueGrace and never closer than
//     kueueMargin to the deadline: suspended while Kueue's cache still holds the Workload
//     admitted, Kueue would start it again. The first look that finds everything stopped marks
//     the fence held; how long that took, and each step, is logged and reported, since
//     LostAfter must cover it. The Events of the stops are written once it holds.
//   - lowered: once a renewal succeeds again, the fencer reads its ManagedCluster from the hub
//     (not a cache) and compares the epoch with the one it fenced under. Same epoch: the hub never
//     declared the cluster lost, so everything stopped is resumed as it was. A raised epoch: the
//     hub declared the cluster lost and may have started the workloads elsewhere, so the Jobs and
//     JobSets MultiKueue created are deleted (MultiKueue dispatches them again) and a fenced
//     work's objects resume only if the work is still the cluster's on the hub (otherwise the work
//     agent removes them). A Job that finished is never stopped or deleted: its status must reach
//     the hub first.
//   - when the renewal that ended an outage came so close to LostAfter that the hub may be
//     declaring the cluster lost at that moment, the fencer waits until LostAfter plus the
//     clock-skew bound has passed before it reads the epoch, so it cannot read it just before it
//     is raised.
//
// It reports the episode on the ManagedCluster as the condition WorkloadsFenced (False, reason
// Healed, with when it was raised and lowered and what was stopped, resumed and removed) when the
// link returns: while cut off it can write nothing to the hub. Each stop and resume is an Event
// on the spoke, beside the object.
//
// A fence needs a running agent: if the agent itself is down, nothing stops the workloads (see
// docs/failover.md).
package fence
