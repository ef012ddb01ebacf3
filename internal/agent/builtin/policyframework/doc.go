// Package policyframework is the built-in add-on governance-policy-framework (OCM's name): the
// link between the replicated policies the hub keeps in the cluster's namespace and the policy
// engines on the cluster.
//
// For each replicated policy (label policy.open-cluster-management.io/root-policy) it keeps each
// ConfigurationPolicy template on the cluster, in the namespace named after the cluster (made if
// missing), labeled with the policy (PolicyLabel) and as the add-on's own, with the policy's
// remediationAction when the policy sets one; it deletes those whose policy or template went,
// and never touches a ConfigurationPolicy it did not make. It reports each policy's status on the
// hub: per template (details, by templateMeta.name) the ConfigurationPolicy's compliance at its
// current generation and a history of its messages ("NonCompliant; violation - namespaces [prod]
// not found"), newest first, at most HistoryLimit, a new entry only when the message changes;
// and the policy's compliance (NonCompliant over Pending, unless ignorePending, over silence over
// Compliant). A template of a kind other than ConfigurationPolicy, one that does not decode, a
// name two templates share, and a cluster that serves no ConfigurationPolicy (the add-on
// config-policy-controller is off) are each reported as that template's violation with the field
// and the fix; the other templates and policies go on.
//
// With the agent's hub identity it may read the policies in the cluster's namespace and write
// their status, nothing else (internal/hub/registration's namespace role): the hub's copy is
// what the cluster gets, and the compliance the cluster reports is all it can change.
package policyframework
