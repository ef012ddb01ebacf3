package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ManagedClusterAddOn is one add-on on one managed cluster. It lives in the cluster's namespace
// on the hub and is named after the add-on's ClusterManagementAddOn. Its spec may override the
// add-on's configuration for this cluster; its status is written by the add-on's hub controller
// (registrations, configuration references) and by the agent (health).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName={mca,mcas}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=".status.conditions[?(@.type==\"Available\")].status"
// +kubebuilder:printcolumn:name="Degraded",type="string",JSONPath=".status.conditions[?(@.type==\"Degraded\")].status"
// +kubebuilder:printcolumn:name="Progressing",type="string",JSONPath=".status.conditions[?(@.type==\"Progressing\")].status"
type ManagedClusterAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is this cluster's configuration of the add-on.
	// +required
	Spec ManagedClusterAddOnSpec `json:"spec"`

	// Status is the add-on's state on this cluster.
	// +optional
	Status ManagedClusterAddOnStatus `json:"status,omitempty"`
}

// ManagedClusterAddOnSpec is one cluster's configuration of an add-on.
type ManagedClusterAddOnSpec struct {
	// Configs are configuration objects for the add-on on this cluster; each replaces the
	// configuration of the same group and resource that the ClusterManagementAddOn gives.
	// The kind must be among the status's supportedConfigs.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Configs []AddOnConfig `json:"configs,omitempty"`
}

// ManagedClusterAddOnStatus is the state of an add-on on one cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.registrations) || self.registrations.all(r, r.type != 'customSigner' || has(r.customSigner))",message="status.registrations: an entry of type customSigner needs customSigner.signerName"
// +kubebuilder:validation:XValidation:rule="!has(self.registrations) || self.registrations.all(r, !has(r.customSigner) || r.customSigner.signerName != 'kubernetes.io/kube-apiserver-client')",message="status.registrations: the signer kubernetes.io/kube-apiserver-client is registered with type kubeClient, not customSigner"
// +kubebuilder:validation:XValidation:rule="!has(self.registrations) || self.registrations.all(r, (r.type == 'customSigner' && !has(r.customSigner)) || self.registrations.exists_one(o, o.type == r.type && (o.type == 'kubeClient' || (has(o.customSigner) && o.customSigner.signerName == r.customSigner.signerName))))",message="status.registrations registers a signer twice (one kubeClient entry at most, and one customSigner entry per signerName): merge the entries"
type ManagedClusterAddOnStatus struct {
	// Conditions: Available (the agent is healthy), Degraded, Progressing (configuration being
	// applied), Configured, ManifestApplied, RegistrationApplied and others.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// RelatedObjects are objects that help understand the add-on here: the ClusterManagementAddOn,
	// the ManifestWorks that deploy the agent, namespaces it uses.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	RelatedObjects []ObjectReference `json:"relatedObjects,omitempty"`

	// AddOnMeta repeats the ClusterManagementAddOn's display name and description.
	// +optional
	AddOnMeta AddOnMeta `json:"addOnMeta,omitempty"`

	// SupportedConfigs are the configuration kinds spec.configs may override, one entry per group
	// and resource; empty means this cluster cannot override any.
	// +optional
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	// +kubebuilder:validation:MaxItems=32
	SupportedConfigs []ConfigGroupResource `json:"supportedConfigs,omitempty"`

	// ConfigReferences are the configurations in effect on this cluster (from the
	// ClusterManagementAddOn, its install placement, or spec.configs) and which version of each
	// is desired and applied.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	ConfigReferences []ConfigReference `json:"configReferences,omitempty"`

	// Namespace is the namespace on the managed cluster that holds the agent's registration
	// Secrets and health Lease; needed when registrations are set or the health check mode is
	// Lease.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Registrations say how the agent gets credentials for the hub: one CSR per entry, signed by
	// the entry's signer. At most one entry per signer.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Registrations []RegistrationConfig `json:"registrations,omitempty"`

	// HealthCheck says how the hub judges the agent's health; Lease by default.
	// +optional
	HealthCheck HealthCheck `json:"healthCheck,omitempty"`
}

// ObjectReference points at an object by group, resource, namespace and name.
type ObjectReference struct {
	// Group of the object's resource; empty for the core group.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`

	// Resource is the plural resource name of the object.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Resource string `json:"resource"`

	// Namespace of the object; empty for a cluster-scoped object.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Name of the object.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ConfigReference is one configuration in effect for an add-on on a cluster.
type ConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// LastObservedGeneration is the configuration object's generation last acted on.
	// Deprecated: compare spec hashes instead.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration,omitempty"`

	// DesiredConfig is the configuration version the agent should run with.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// LastAppliedConfig is the version the agent's ManifestWorks were last applied with.
	// +optional
	LastAppliedConfig *ConfigSpecHash `json:"lastAppliedConfig,omitempty"`
}

// RegistrationType is how an add-on agent authenticates to the hub.
// +kubebuilder:validation:Enum=kubeClient;customSigner
type RegistrationType string

const (
	// KubeClient: the agent gets a kubeconfig for the hub's kube-apiserver, in the Secret
	// <addon>-hub-kubeconfig on the managed cluster (v1alpha1: signer
	// kubernetes.io/kube-apiserver-client).
	KubeClient RegistrationType = "kubeClient"
	// CustomSigner: the agent gets a client certificate of another signer, for endpoints of the
	// hub other than the kube-apiserver, in the Secret <addon>-<signer>-client-cert.
	CustomSigner RegistrationType = "customSigner"
)

// RegistrationConfig is one set of hub credentials for the agent: the klusterlet creates a CSR
// for it and, once signed, stores the result on the managed cluster.
type RegistrationConfig struct {
	// Type is kubeClient or customSigner.
	// +required
	Type RegistrationType `json:"type"`

	// KubeClient configures a kubeClient registration.
	// +optional
	KubeClient *KubeClientConfig `json:"kubeClient,omitempty"`

	// CustomSigner configures a customSigner registration; needed when type is customSigner.
	// +optional
	CustomSigner *CustomSignerConfig `json:"customSigner,omitempty"`
}

// KubeClientConfig is a registration for the hub's kube-apiserver.
type KubeClientConfig struct {
	// Subject is the agent's identity on the hub; empty gives the add-on's default identity.
	// +optional
	Subject KubeClientSubject `json:"subject,omitempty"`

	// Driver is how the agent authenticates: csr (a client certificate) or token (a service
	// account token). Set by the agent.
	// +optional
	Driver KubeClientDriver `json:"driver,omitempty"`
}

// CustomSignerConfig is a registration whose certificate another signer signs.
type CustomSignerConfig struct {
	// SignerName is the signer that signs the agent's CSR.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$`
	SignerName string `json:"signerName"`

	// Subject is the identity in the certificate; empty gives the add-on's default identity.
	// +optional
	Subject Subject `json:"subject,omitempty"`
}

// HealthCheckMode says how the hub judges an add-on agent's health.
// +kubebuilder:validation:Enum=Lease;Customized
type HealthCheckMode string

const (
	// HealthCheckModeLease: the agent renews a Lease named after the add-on in status.namespace
	// on the managed cluster, and the add-on is Available while it does.
	HealthCheckModeLease HealthCheckMode = "Lease"
	// HealthCheckModeCustomized: the add-on's hub controller sets the Available condition itself,
	// for example from ManifestWork status feedback.
	HealthCheckModeCustomized HealthCheckMode = "Customized"
)

// HealthCheck says how an add-on's health is checked.
type HealthCheck struct {
	// Mode is Lease (default) or Customized.
	// +optional
	// +kubebuilder:default=Lease
	Mode HealthCheckMode `json:"mode,omitempty"`
}

// KubeClientDriver is how an agent authenticates to the hub's kube-apiserver.
// +kubebuilder:validation:Enum=csr;token
type KubeClientDriver string

const (
	// KubeClientDriverCSR authenticates with a client certificate issued through a CSR.
	KubeClientDriverCSR KubeClientDriver = "csr"
	// KubeClientDriverToken authenticates with a service account token.
	KubeClientDriverToken KubeClientDriver = "token"
)

// Condition types of a ManagedClusterAddOn.
const (
	// ManagedClusterAddOnConditionAvailable is True while the agent is healthy.
	ManagedClusterAddOnConditionAvailable = "Available"
	// ManagedClusterAddOnConditionDegraded is True when the agent runs but does not work fully.
	ManagedClusterAddOnConditionDegraded = "Degraded"
	// ManagedClusterAddOnConditionProgressing is True while the agent is installed or upgraded.
	ManagedClusterAddOnConditionProgressing = "Progressing"
	// ManagedClusterAddOnConditionConfigured is True once the configuration references are
	// resolved.
	ManagedClusterAddOnConditionConfigured = "Configured"
	// ManagedClusterAddOnManifestApplied is True once the agent's ManifestWorks are applied.
	ManagedClusterAddOnManifestApplied = "ManifestApplied"
	// ManagedClusterAddOnHookManifestCompleted is True once the pre-delete hook finished.
	ManagedClusterAddOnHookManifestCompleted = "HookManifestCompleted"
	// ManagedClusterAddOnRegistrationApplied is True once status.registrations and
	// status.namespace are set; agents are deployed only after that.
	ManagedClusterAddOnRegistrationApplied = "RegistrationApplied"
)

// ManagedClusterAddOnList is a list of ManagedClusterAddOns.
//
// +kubebuilder:object:root=true
type ManagedClusterAddOnList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedClusterAddOn `json:"items"`
}

// InstallNamespaceAnnotation holds, on a v1beta1 ManagedClusterAddOn, the v1alpha1 field
// spec.installNamespace, which v1beta1 does not have (OCM's key).
const InstallNamespaceAnnotation = "addon.open-cluster-management.io/v1alpha1-install-namespace"
