// Package addontemplate deploys the agents of template add-ons, as OCM's addon manager does for an
// AddOnTemplate (addon.open-cluster-management.io/v1alpha1): an add-on whose agent is a set of
// manifests, with no code of its own on the hub.
//
// Reconciler works per ManagedClusterAddOn (MCA). An MCA is a template add-on when its
// status.configReferences (written by the hub's lifecycle controller, internal/hub/addon) hold a
// desired AddOnTemplate with its spec hash; like OCM it waits until the MCA is Configured. On a
// cluster the hub does not accept, that is being deleted, or whose namespace is terminating
// (internal/hub/delivery) it deploys nothing (OCM's add-on manager likewise deploys nothing on a
// cluster being deleted) and says why in ManifestApplied (False, the rule's reason); the
// registration controller is emptying that namespace. The agent may write status.configReferences
// too, so (trust.go) the template and the AddOnDeploymentConfig named there are used only if
// addon.AllowedConfigs allows them for that cluster's add-on (worked out, as the lifecycle
// controller does, from the ClusterManagementAddOn, the placements, the MCA's spec and the hub's
// rollout record) and the template's spec.addonName is the add-on's name; otherwise
// ManifestApplied is False (ConfigurationNotAllowed) naming the field and the fix, and nothing is
// rendered, bound or signed from it. Then:
//
//   - Render (render.go, decorate.go): the template's agentSpec becomes ManifestWork
//     addon-<addon>-deploy-0 in the cluster's namespace. Each {{NAME}} in a manifest is replaced
//     by a variable, with OCM's precedence: HUB_KUBECONFIG (with a registration) < the
//     AddOnDeploymentConfig's customizedVariables < CLUSTER_NAME and INSTALL_NAMESPACE. A
//     variable that is not defined is an error naming the manifest and the variable (OCM
//     renders it empty), reported in ManifestApplied (AddOnTemplateInvalid); the add-on's
//     existing work is left as it was. Deployments and DaemonSets get the preset variables as
//     environment, the credential volumes of the registrations, nodePlacement and registries;
//     agentInstallNamespace moves namespaced objects. Each Deployment and DaemonSet gets a
//     WellKnownStatus feedback rule: the health probe.
//   - An add-on may have a check of its own (Reconciler.Checks, by add-on name: the built-in
//     flower-addon's checks its variables): what it refuses is ManifestApplied=False
//     (ConfigurationInvalid) with its message, before anything is rendered.
//   - The work carries OCM's labels, the template's name (label
//     open-cluster-management.io/addon-template-name), the configurations' spec hashes (the
//     lifecycle controller's progressing reads them), the hash of the rendered spec (the work is
//     written only when it changes: the API server adds defaults to what it stores), and a
//     controller reference to the MCA: the hub updates only works with that reference to this MCA, and the garbage collector removes
//     the work with the MCA. A work of that name without it is reported, not touched. When the
//     MCA's configurations no longer name a template, the work goes if it also carries the
//     template label (another add-on manager may name its works alike).
//   - Registrations (registration.go): status.registrations from the template's registration
//     (KubeClient: the kube-apiserver client signer with OCM's default subject; CustomSigner:
//     its signer and subject), status.namespace (the agent's install namespace, where the spoke
//     writes the credentials) and healthCheck mode Customized (the spoke's lease check stays out).
//   - Hub permissions: each KubeClient hubPermission is a RoleBinding to the add-on's group
//     system:open-cluster-management:cluster:<c>:addon:<a>: CurrentCluster in the cluster's
//     namespace (owned by the MCA), SingleNamespace in its namespace (labeled with the MCA's
//     UID, cluster and add-on, since an owner must share the namespace; removed by the hub when
//     the MCA goes, also after a restart through the bindings' watch). A role that does not
//     exist, or a binding of that name the hub did not make, is RegistrationApplied=False
//     (SetPermissionFailed) naming the field, and so is a role the API server will not let the
//     hub bind: as OCM's addon manager, the hub holds no `bind` or `escalate`, so it binds only
//     roles whose permissions the binding identity holds or that an administrator lets it bind
//     (docs/addons.md). With Reconciler.Identity (--addon-manager-identity, binder.go) the
//     bindings are written acting as that ServiceAccount, OCM's addon-manager-controller-sa in
//     the chart: OCM add-ons grant it their agents' roles, so their manifests work unchanged;
//     a refusal names the grant that is missing, and a binding that names the identity requeues
//     the add-ons waiting for one. The hub reads as itself.
//   - Status from the work (health.go): ManifestApplied from its Applied condition, Available
//     from its status feedback (OCM's WorkloadAvailability check: a ready replica per
//     Deployment and DaemonSet), with OCM's reasons.
//   - CustomSigner certificates (signer.go): SignerReconciler approves the CertificateSigningRequests of a
//     template's custom signer that an agent of the add-on's cluster filed for the subject the
//     template gives that cluster's add-on (worked out from the template, never read from
//     status.registrations, which the agent may write; the template itself is checked as above),
//     and signs them with the CA in the Secret the template names (24 h, as OCM). The
//     hub gets `approve`/`sign` on that signer and `get` on that Secret from whoever sets up the
//     signer, not from its own roles.
//
// Status is written only when it changes, conditions with ObservedGeneration.
package addontemplate
