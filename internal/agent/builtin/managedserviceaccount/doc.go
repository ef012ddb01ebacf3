// Package managedserviceaccount is the built-in add-on managed-serviceaccount: the cluster's
// side of OCM's ManagedServiceAccount API (api/authentication/v1beta1).
//
// For each ManagedServiceAccount in the cluster's namespace on the hub it makes a ServiceAccount
// of the same name in open-cluster-management-agent-addon on the cluster (labeled
// authentication.open-cluster-management.io/is-managed-serviceaccount=true), requests a token
// of it for spec.rotation.validity, and writes the token and the cluster's CA into the Secret of
// the same name that the hub made beside the ManagedServiceAccount (keys token and ca.crt, as
// OCM's). It requests a new token once 80% of the current one's life has passed (OCM's rule),
// when the ServiceAccount was recreated (its old tokens no longer work), or when the Secret lost
// its token, and reports condition TokenReported, status.expirationTimestamp and
// status.tokenSecretRef. When a ManagedServiceAccount goes, so does its ServiceAccount, and with
// it every token issued for it.
//
// It never issues a token for a ServiceAccount it did not make (one without the label), which
// OCM's agent does, and writes no Secret the hub did not make for that ManagedServiceAccount (the
// hub's Role lets it update those Secrets by name and no other). It grants the ServiceAccount
// nothing: rights come from whoever may grant them on the cluster, for example with a
// ManifestWork that binds a role to it.
//
// The pure step is next (when to request a token); Run watches the hub's ManagedServiceAccounts
// and syncs on every change and when a token is due.
package managedserviceaccount
