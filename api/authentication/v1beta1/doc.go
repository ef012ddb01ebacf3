// Package v1beta1 is authentication.open-cluster-management.io/v1beta1, OCM's
// ManagedServiceAccount API (its managed-serviceaccount add-on), served by the Flotilla hub.
//
// A ManagedServiceAccount in a cluster's namespace on the hub asks for a ServiceAccount of the
// same name on that cluster, in the add-on's install namespace (open-cluster-management-agent-addon),
// and for a short-lived token of it in a Secret of the same name beside the ManagedServiceAccount
// on the hub (keys ca.crt and token), rotated before it expires. The hub makes the Secret and lets
// the cluster's agent write it and no other Secret; the agent (its built-in add-on
// managed-serviceaccount, internal/agent/builtin/managedserviceaccount) makes the ServiceAccount,
// requests its tokens and reports them. The ServiceAccount gets no rights from either: whoever
// needs them grants them on the cluster with a ManifestWork.
//
// The field names, defaults, labels and condition types are OCM's (open-cluster-management.io/
// managed-serviceaccount, apis/authentication/v1beta1). OCM's deprecated v1alpha1 is not served.
//
// +kubebuilder:object:generate=true
// +groupName=authentication.open-cluster-management.io
package v1beta1
