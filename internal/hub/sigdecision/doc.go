// Package sigdecision mirrors each Placement's OCM PlacementDecisions
// (cluster.open-cluster-management.io/v1beta1, written by internal/hub/placement) into SIG
// Multicluster PlacementDecisions (multicluster.x-k8s.io/v1alpha1, KEP-5313), so that consumers
// of the SIG API (Kueue's MultiKueue, GitOps tools) read Flotilla's placements without knowing
// OCM. The hub runs it only when asked (hub.Options.MirrorSIGDecisions, `flotilla hub
// --sig-placement-decisions`).
//
// The reconciler is keyed by Placement. It reads the OCM PlacementDecisions labeled
// cluster.open-cluster-management.io/placement=<placement> that the Placement controls, and
// writes one SIG PlacementDecision per OCM slice:
//
//   - named as the OCM slice (<placement>-decision-<N>), in the placement's namespace, controlled
//     by the Placement (so it goes with it);
//   - labeled multicluster.x-k8s.io/placement-key=<placement>, multicluster.x-k8s.io/decision-key=<placement>
//     (the same on all slices of the placement), multicluster.x-k8s.io/decision-index=N-1 (0-based,
//     in the OCM slices' numeric order), and cluster.open-cluster-management.io/placement=<placement>;
//   - schedulerName "flotilla" (SchedulerName);
//   - the OCM slice's decisions in the same order, each with clusterProfileRef{name: <cluster>,
//     namespace: <placement's namespace>} (the ClusterProfile internal/hub/clusterprofile keeps
//     for that cluster there) and the OCM decision's reason.
//
// SIG PlacementDecisions the Placement does not control are never changed or deleted; one with a
// name the mirror needs makes the reconcile fail with an error naming it.
//
// Like the OCM slices, the SIG slices never let a cluster present before and after an update
// vanish from all of them in between: the writes are ordered by placement.Plan (shared with the
// placement controller), reading the current SIG slices from the API server rather than the
// cache. A spare slice Plan adds to break a cycle carries the next free decision-index and is
// deleted at the end of the update. The mirror follows the OCM slices write by write, so
// consumers may also see the placement controller's intermediate states (a new slice, empty
// before its decisions are written), never one missing a still-selected cluster.
package sigdecision
