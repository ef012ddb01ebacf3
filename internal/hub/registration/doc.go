// Package registration is the hub side of cluster registration: it turns a cluster's acceptance
// (spec.hubAcceptsClient) into the access its agent needs, and takes that access away on denial or
// deletion; and it approves an accepted cluster's certificate renewals.
//
// Two things are needed before an agent can act on the hub, as in OCM: its first certificate
// request approved (by an administrator, `flotilla accept`) and the cluster accepted. Until it is
// accepted the agent may only read its own ManagedCluster. Access is granted through RBAC bound to
// the group system:open-cluster-management:<cluster> that the agent's certificate carries, so
// revoking it is deleting the bindings: the certificate stays valid but can do nothing. Before a
// denied or deleted cluster's access goes, its namespace is emptied while the agent can still
// remove what its ManifestWorks applied (cleanup.go), within a bound.
package registration
