// Package addonregistration is the hub side of add-on credentials: it approves the certificate
// requests that managed clusters' agents file for their add-ons, and only those it can vouch for.
//
// A request is approved when all of these hold, and otherwise left alone (never denied: a request
// this package does not recognize may be someone else's to judge, and a request for a custom
// signer is its signer's):
//
//   - it asks the kubernetes.io/kube-apiserver-client signer for exactly an add-on agent's
//     identity (clusteridentity.CheckAddOnRequest): user
//     system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent> in the groups
//     system:open-cluster-management:cluster:<cluster>:addon:<addon>,
//     system:open-cluster-management:addon:<addon> and system:authenticated, client usages only;
//   - it was filed by an agent of that same cluster (spec.username and spec.groups, which the API
//     server sets from the requester's credentials), so one cluster cannot obtain another
//     cluster's add-on identity, and an add-on cannot obtain another add-on's;
//   - the cluster is accepted and not being deleted;
//   - a ManagedClusterAddOn of that add-on exists in the cluster's namespace, not being deleted,
//     whose status.registrations names the signer, with a subject, if it sets one, equal to the
//     request's.
//
// The groups of an approved certificate are fixed, whatever a ManagedClusterAddOn's status says:
// the agent may write that status, so it cannot be trusted to widen an identity. What the
// add-on identity may do on the hub is whatever RBAC binds to its user and groups.
//
// A change to a ManagedClusterAddOn or a ManagedCluster brings back the undecided requests
// labeled with its cluster (and add-on), so a request filed before its registration appeared is
// approved once it does.
package addonregistration
