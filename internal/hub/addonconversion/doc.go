// Package addonconversion converts the add-on API (addon.open-cluster-management.io) between
// v1alpha1, the version the hub stores, and v1beta1, losing nothing in either direction: an
// object converted to the other version and back is the object it was. The hub's conversion
// webhook (internal/hub/webhook) serves these functions to the API server.
//
// The versions map onto each other as OCM maps them (open-cluster-management-io/ocm,
// pkg/addon/webhook/conversion), so that OCM's clients read the same thing from Flotilla:
//
//   - ClusterManagementAddOn spec.supportedConfigs[] (group, resource, defaultConfig) are
//     spec.defaultConfigs[] (group, resource, namespace, name); a kind without a default object
//     gets the name ReservedNoDefaultConfigName.
//   - ManagedClusterAddOn spec.installNamespace is kept in the annotation
//     InstallNamespaceAnnotation (OCM's key).
//   - A registration with signer kubernetes.io/kube-apiserver-client is type kubeClient, any
//     other signer type customSigner; status.kubeClientDriver is the kubeClient registrations'
//     driver.
//   - status.configReferences[] name and namespace (v1alpha1) are desiredConfig's (v1beta1); a
//     reference without desiredConfig gets one made of its name and namespace.
//
// Where OCM's mapping loses something (a field of one version only, such as
// spec.addOnConfiguration, or a value the mapping cannot tell apart, such as organization units
// of a kubeClient subject or two kubeClient registrations with different drivers), the converted
// object carries the original value in an annotation with the prefix AnnotationPrefix, and the
// conversion back restores it, provided the field it came from still converts to what the object
// now holds: a client that changed the field in the other version gets its change, not the stale
// original. The conversion removes the annotations it reads, so that they never reach the version
// they describe. Annotations with the prefix are reserved for the conversion.
package addonconversion
