package v1beta1

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

// BaseSubject is the user and groups of an add-on agent's identity on the hub.
type BaseSubject struct {
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
}

// KubeClientSubject is the identity of an agent that talks to the hub's kube-apiserver.
type KubeClientSubject struct {
	BaseSubject `json:",inline"`
}

// Subject is the identity in a client certificate of a custom signer.
type Subject struct {
	BaseSubject `json:",inline"`

	// OrganizationUnits are the certificate's organizational units (OU).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	OrganizationUnits []string `json:"organizationUnits,omitempty"`
}

// KubeAPIServerClientSignerName is the signer of client certificates for the hub's
// kube-apiserver: a registration with this signer gives the agent a hub kubeconfig, stored in
// the Secret <addon>-hub-kubeconfig on the managed cluster.
const KubeAPIServerClientSignerName = "kubernetes.io/kube-apiserver-client"

// DefaultAgentInstallNamespace is the namespace on a managed cluster where add-on agents are
// installed unless configured otherwise.
const DefaultAgentInstallNamespace = "open-cluster-management-agent-addon"
