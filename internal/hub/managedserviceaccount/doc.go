// Package managedserviceaccount is the hub's side of OCM's ManagedServiceAccount API
// (authentication.open-cluster-management.io/v1beta1, api/authentication/v1beta1).
//
// For each cluster namespace that holds ManagedServiceAccounts the controller keeps RoleBinding
// flotilla-managed-serviceaccount-agent, which gives the cluster's agents ClusterRole
// flotilla-managed-serviceaccount-agent there (get, create, update and patch Secrets by name; no
// list, no watch, no delete), and removes it when the last ManagedServiceAccount goes. The hub
// holds bind on that ClusterRole, which an installer makes (config/rbac), and no right to Secrets
// itself. It deletes a ManagedServiceAccount once spec.ttlSecondsAfterCreation has passed (OCM's
// EphemeralIdentity), and says in condition SecretCreated why one outside a cluster's namespace
// is not served (its admission webhook refuses to create one there).
//
// The cluster's agent does the rest (internal/agent/builtin/managedserviceaccount): the token
// Secret, the ServiceAccount on the cluster, its tokens and the other conditions.
//
// The controller reads in Reconcile, decides in decide (pure, table-tested), and writes in apply.
package managedserviceaccount
