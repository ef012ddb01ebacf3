// Package addon is the add-on agent: the part of `flotilla agent` that gives the cluster's
// add-ons their hub credentials and reports their health, as OCM's registration agent does.
//
// It reaches the hub with the registration agent's credentials (registration.HubAccess), watches
// the ManagedClusterAddOns of the cluster's namespace with them (watching again when they are
// renewed), and runs as loops of a loop.Runner (internal/agent/loop):
//
//   - credentials: every status.registrations entry gets a certificate. The agent files a
//     CertificateSigningRequest on the hub as the cluster's agent, for the entry's subject with
//     OCM's defaults (Subject: user system:open-cluster-management:cluster:<c>:addon:<a>:agent:<agent>,
//     and for the kube-apiserver client signer the groups ...:cluster:<c>:addon:<a>,
//     ...:addon:<a> and system:authenticated), labeled with the cluster and add-on names. The
//     hub approves requests for the kube-apiserver client signer that it can vouch for
//     (internal/hub/addonregistration); whoever holds a custom signer signs that signer's. The
//     certificate and its key go into a Secret in the add-on's install namespace on the spoke
//     (InstallNamespace), named as OCM names it (SecretName): <addon>-hub-kubeconfig, with keys
//     kubeconfig (the hub's address and CA, with the certificate and key inline), tls.crt,
//     tls.key and cluster-name; or <addon>-<signer>-client-cert without the kubeconfig. The
//     certificate is renewed at 80% of its lifetime (registration.RenewAt); the request
//     machinery (FileRequest, CheckRequest, EndsWait) is the registration agent's own. Each
//     issue is reported as ClusterCertificateRotated=True (ClientCertificateUpdated), each
//     failure as False (ClientCertificateUpdateFailed). A registration removed, or its add-on
//     deleted, loses its Secret; an add-on being deleted keeps it, for its agent's clean-up.
//     A Secret whose namespace does not exist yet (the add-on's ManifestWork creates it) waits
//     without backoff: the agent watches the spoke's namespaces and stores it the moment the
//     namespace is created.
//   - addon namespace: like OCM's klusterlet, the agent creates open-cluster-management-agent-addon
//     (DefaultInstallNamespace) on the spoke, labeled addon.flotilla.io/created-by=flotilla-agent,
//     and creates it again if it is deleted, because OCM's add-ons install their agents there and
//     their ManifestWorks do not create it. DisableDefaultAddOnNamespace (the agent flag
//     --disable-default-addon-namespace, OCM's klusterlet option of that name) turns this off.
//     The agent never deletes a namespace.
//   - health: an add-on whose health check mode is Lease (the default) renews a Lease named
//     after it in its install namespace on the spoke. Available is True
//     (ManagedClusterAddOnLeaseUpdated) while the Lease was renewed within the lease window
//     (LeaseWindowFactor lease durations), Unknown once it is older
//     (ManagedClusterAddOnLeaseUpdateStopped; OCM says False) or when there is none
//     (ManagedClusterAddOnLeaseNotFound). The Leases are read every HealthSyncInterval and at
//     the moment a fresh one would turn stale. Customized leaves Available to the add-on.
//
// The agent writes an add-on's status only when a condition changes, with a patch that fails
// rather than overwrite a status someone changed meanwhile (the next round writes again).
// Time comes from the injected clock.
package addon
