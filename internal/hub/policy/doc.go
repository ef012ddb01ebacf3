// Package policy is the hub's policy propagator: OCM's governance API
// (policy.open-cluster-management.io, api/policy) served as OCM's governance-policy-propagator
// serves it.
//
// Reconciler takes each root policy (a Policy without the root-policy label, outside every
// cluster's namespace) and plans, as a pure function (plan), where it goes: every cluster that
// the Placement of a PlacementBinding in its namespace decides, when a subject of the binding
// names the policy or a PolicySet that lists it (less the clusters the set excludes for it); a
// restricted binding (subFilter) places nothing itself and lends its enforce override to
// clusters others place; a disabled policy goes nowhere. For each such cluster the hub keeps the
// replicated policy <namespace>.<name> in the cluster's namespace (replica: the root's spec and
// metadata, OCM's labels, remediationAction enforce under an override), and deletes its copies
// from clusters no longer placed and of roots that are gone. It writes the root's status:
// placement (the bindings), status (each placed cluster with the compliance its copy reports)
// and compliant (NonCompliant over Pending over silence over Compliant, as OCM sums them).
// SetReconciler writes each PolicySet's status from its policies' statuses, as OCM's policy set
// controller does.
//
// Two rules OCM does not have:
//
//   - The hub's copies carry the annotation policy.flotilla.io/root-policy-uid. A policy in a
//     cluster's namespace without it (hand-made, even with OCM's labels) is never updated or
//     deleted; the root's Warning event ReplicatedPolicyNotOwned names it. OCM's propagator
//     deletes every policy in a cluster namespace that is not one of its copies.
//   - The compliance a cluster reports is read only from the hub's own copy in that cluster's
//     namespace, which only that cluster's agent may write the status of.
//
// A root whose <namespace>.<name> is longer than 63 characters (a label value) goes nowhere and
// gets a Warning event ReplicatedNameTooLong; the webhook refuses to create one.
package policy
