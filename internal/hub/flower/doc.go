// Package flower is the hub's side of the built-in add-on flower-addon: Flower federated learning
// as OCM addon-contrib's flower-addon deploys it (the add-on OCM's FederatedLearning uses), with
// TLS between SuperNodes and the SuperLink on by default.
//
// The add-on's agent is an AddOnTemplate, so that delivery, health, feature labels and
// per-cluster configuration are the template add-on machinery's (internal/hub/addontemplate): the
// hub keeps the AddOnTemplate flower-addon (a SuperNode Deployment and Service in namespace
// flower-addon on each cluster, and with TLS the ConfigMap flower-ca holding the CA certificate)
// and the AddOnDeploymentConfig flower-system/flower-addon with OCM's variables SUPERLINK_ADDRESS,
// SUPERLINK_PORT and IMAGE, both made from the hub's options (Options). The ClusterManagementAddOn
// flower-addon, made by internal/hub/builtins, names them as its defaults; a ManagedClusterAddOn
// may name an AddOnDeploymentConfig of its own, whose variables Check tests before anything is
// rendered (the field and the fix in ManifestApplied).
//
// Reconciler keeps, while the ClusterManagementAddOn flower-addon is the hub's (label
// addon.flotilla.io/built-in) and at least one cluster has the add-on: in namespace flower-system
// the CA (Secret flower-ca, made by the hub, ten years), the SuperLink's serving certificate
// (Secret superlink-tls, one year, renewed with a third left, for the Service's names and the
// external address), ConfigMap flower-ca (the CA certificate, for the hub's Flower clients), the
// Deployment and Service superlink, and the template and deployment config. When no cluster has
// the add-on, the Deployment and Service go; the CA, the certificates and the configurations
// stay, so that enabling it again trusts the same CA. The CA's key never leaves the hub: the
// template carries only the CA certificate, and the serving key stays in flower-system.
//
// Every object it writes carries addon.flotilla.io/built-in=flower-addon; one of the same name
// without it is never changed or deleted, and the problem is reported in every
// ManagedClusterAddOn flower-addon (condition SuperLinkReady, which also says whether the
// SuperLink is available). A ClusterManagementAddOn flower-addon someone else made (OCM's chart)
// is theirs: the hub then does nothing for Flower.
//
// It reads flower-system directly from the API server rather than from a cache (no Secrets or
// Deployments are watched cluster-wide) and looks again every minute, so that what someone
// deletes is made again. Its permissions there are a Role in flower-system (config/rbac).
package flower
