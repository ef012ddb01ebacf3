package v1alpha1

// Configuration references, shared by ClusterManagementAddOn and ManagedClusterAddOn. An add-on
// configuration is any object (an AddOnDeploymentConfig, an AddOnTemplate, an add-on's own
// kind) named by its group, resource, namespace and name; the hub hashes its spec so that a
// change can be rolled out and the applied version reported.

// ConfigGroupResource names a kind of add-on configuration by API group and resource.
type ConfigGroupResource struct {
	// Group is the API group of the configuration's resource; empty for the core group.
	// +optional
	// +kubebuilder:default=""
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`

	// Resource is the plural resource name of the configuration, for example
	// addondeploymentconfigs.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Resource string `json:"resource"`
}

// ConfigReferent locates one configuration object of a known group and resource.
type ConfigReferent struct {
	// Namespace of the configuration object; empty when the configuration is cluster-scoped.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Name of the configuration object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// AddOnConfig is one configuration object given to an add-on: its kind and where it is.
type AddOnConfig struct {
	ConfigGroupResource `json:",inline"`
	ConfigReferent      `json:",inline"`
}

// ConfigSpecHash records one version of a configuration object: where it is and the hash of
// its spec at that version.
type ConfigSpecHash struct {
	ConfigReferent `json:",inline"`

	// SpecHash is the hash of the configuration's spec, computed by the hub; a new hash means a
	// new version to roll out.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	SpecHash string `json:"specHash,omitempty"`
}

// ConfigMeta is a kind of configuration an add-on accepts, with the object used when neither
// an install placement nor a ManagedClusterAddOn names one.
type ConfigMeta struct {
	ConfigGroupResource `json:",inline"`

	// DefaultConfig is the configuration object every installation uses by default.
	// +optional
	DefaultConfig *ConfigReferent `json:"defaultConfig,omitempty"`
}

// ConfigCoordinates is the older, single-CRD way of naming an add-on's configuration.
// Deprecated: use supportedConfigs (ClusterManagementAddOn) and configReferences
// (ManagedClusterAddOn) instead.
type ConfigCoordinates struct {
	// CRDName is the name of the CRD whose objects configure the add-on.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	CRDName string `json:"crdName,omitempty"`

	// CRName is the name of the configuring object, when it is the same on every cluster.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	CRName string `json:"crName,omitempty"`

	// LastObservedGeneration is the generation of the configuring object last acted on.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration,omitempty"`
}

// AddOnMeta is what a person sees of an add-on in a list of add-ons.
type AddOnMeta struct {
	// DisplayName is the add-on's human-readable name.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DisplayName string `json:"displayName,omitempty"`

	// Description says what the add-on does.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`
}

// Subject is the identity an add-on agent's client certificate carries on the hub.
type Subject struct {
	// User is the user name; empty gives
	// system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	User string `json:"user,omitempty"`

	// Groups are the user's groups; empty gives the cluster's and the add-on's groups
	// (system:open-cluster-management:cluster:<cluster>:addon:<addon>,
	// system:open-cluster-management:addon:<addon>) and system:authenticated.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	Groups []string `json:"groups,omitempty"`

	// OrganizationUnits are the certificate's organizational units (OU).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	OrganizationUnits []string `json:"organizationUnit,omitempty"`
}

// KubeAPIServerClientSignerName is the signer of client certificates for the hub's
// kube-apiserver: a registration with this signer gives the agent a hub kubeconfig, stored in
// the Secret <addon>-hub-kubeconfig on the managed cluster.
const KubeAPIServerClientSignerName = "kubernetes.io/kube-apiserver-client"

// DefaultAgentInstallNamespace is the namespace on a managed cluster where add-on agents are
// installed unless configured otherwise.
const DefaultAgentInstallNamespace = "open-cluster-management-agent-addon"
