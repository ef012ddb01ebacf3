// Package v1beta1 is addon.open-cluster-management.io/v1beta1, the add-on API as OCM serves it
// beside v1alpha1: ClusterManagementAddOn, ManagedClusterAddOn and AddOnDeploymentConfig.
//
// The hub stores v1alpha1 (package api/addon/v1alpha1); the API server asks the hub's conversion
// webhook to turn objects from one version into the other (package internal/hub/addonconversion).
// What differs from v1alpha1:
//
//   - ClusterManagementAddOn: spec.supportedConfigs (each with an optional defaultConfig) is
//     spec.defaultConfigs, a list of configuration objects; spec.addOnConfiguration is gone;
//     status.defaultconfigReferences is spelled status.defaultConfigReferences.
//   - ManagedClusterAddOn: spec.installNamespace is gone (the conversion keeps it in the
//     annotation addon.open-cluster-management.io/v1alpha1-install-namespace, as OCM does);
//     status.registrations say their type (kubeClient or customSigner) instead of a signer
//     name, and the agent's kubeClient driver moves from status.kubeClientDriver into the
//     kubeClient registration; status.configReferences lose the deprecated name and namespace
//     (read desiredConfig); status.addOnConfiguration is gone.
//   - AddOnDeploymentConfig: the same schema in both versions.
//
// Fields that exist in one version only survive a round trip through the other in annotations
// (see internal/hub/addonconversion), so that clients of either version lose nothing.
//
// +kubebuilder:object:generate=true
// +groupName=addon.open-cluster-management.io
package v1beta1
