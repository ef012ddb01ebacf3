// Package v1alpha1 is addon.open-cluster-management.io/v1alpha1, the add-on API of the hub.
//
// An add-on has two halves. ClusterManagementAddOn (cluster-scoped) announces the add-on on the
// hub, names the configuration kinds it accepts and says where it is installed: nowhere by itself
// (install strategy Manual) or on every cluster some Placements select (Placements), rolled out
// with a RolloutStrategy. ManagedClusterAddOn (in a cluster's namespace, named after the
// ClusterManagementAddOn) is the add-on on one cluster: its spec overrides configuration, its
// status is what the add-on's controller and agent report (health, registrations, applied
// configuration). AddOnDeploymentConfig is a configuration add-ons commonly accept (variables,
// node placement, image mirrors, proxy, resources, install namespace), and AddOnTemplate
// describes an add-on without code: the agent's manifests and how the agent registers with the hub.
//
// +kubebuilder:object:generate=true
// +groupName=addon.open-cluster-management.io
package v1alpha1
