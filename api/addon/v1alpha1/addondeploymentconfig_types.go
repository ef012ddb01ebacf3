package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddOnDeploymentConfig customizes how an add-on's agent is deployed: template variables, node
// placement, image mirrors, proxy, resources and install namespace. Add-ons that accept it list
// group addon.open-cluster-management.io, resource addondeploymentconfigs among their configs.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Namespaced
type AddOnDeploymentConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the deployment customisation.
	// +required
	Spec AddOnDeploymentConfigSpec `json:"spec"`
}

// AddOnDeploymentConfigSpec customizes an add-on agent's deployment.
type AddOnDeploymentConfigSpec struct {
	// CustomizedVariables are name/value pairs the add-on substitutes into its agent's manifests,
	// one entry per name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	CustomizedVariables []CustomizedVariable `json:"customizedVariables,omitempty"`

	// NodePlacement constrains the nodes the agent's pods run on. Unset: no constraint is added;
	// empty: any node, tolerating no taint.
	// +optional
	NodePlacement *NodePlacement `json:"nodePlacement,omitempty"`

	// Registries rewrite the agent's image references: an image under a source is pulled from
	// its mirror instead.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Registries []ImageMirror `json:"registries,omitempty"`

	// ProxyConfig is the proxy the agent uses to reach the hub and the outside world.
	// +optional
	ProxyConfig ProxyConfig `json:"proxyConfig,omitempty"`

	// AgentInstallNamespace is the namespace on the managed cluster the agent is installed in. For
	// template add-ons, "" keeps the namespace the AddOnTemplate's manifests name.
	// +optional
	// +kubebuilder:default=open-cluster-management-agent-addon
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	AgentInstallNamespace string `json:"agentInstallNamespace,omitempty"`

	// ResourceRequirements set the compute resources of the agent's containers, one entry per
	// containerID; when several entries match a container, the last one wins.
	// +optional
	// +listType=map
	// +listMapKey=containerID
	// +kubebuilder:validation:MaxItems=64
	ResourceRequirements []ContainerResourceRequirements `json:"resourceRequirements,omitempty"`
}

// CustomizedVariable is a variable for the add-on's manifest templates.
type CustomizedVariable struct {
	// Name of the variable, a C-like identifier such as LOG_LEVEL.
	// +required
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][_a-zA-Z0-9]*$`
	Name string `json:"name"`

	// Value of the variable.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`
}

// NodePlacement chooses the nodes an agent's pods may run on.
type NodePlacement struct {
	// NodeSelector is the node labels the pods require; empty matches every node.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pods run on tainted nodes; empty tolerates no taint.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ImageMirror pulls the images under a source registry from a mirror.
type ImageMirror struct {
	// Mirror is the registry (or repository) to pull from instead; an entry with an empty mirror
	// is ignored.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Mirror string `json:"mirror"`

	// Source is the registry (or repository) the images name; empty redirects every image.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Source string `json:"source,omitempty"`
}

// ProxyConfig is an HTTP(S) proxy for an add-on agent; empty means no proxy.
//
// +kubebuilder:validation:XValidation:rule="!has(self.caBundle) || (has(self.httpsProxy) && size(self.httpsProxy) > 0)",message="spec.proxyConfig.caBundle verifies the HTTPS proxy, but spec.proxyConfig.httpsProxy is not set: set httpsProxy, or remove caBundle"
type ProxyConfig struct {
	// HTTPProxy is the proxy URL for HTTP requests, such as http://proxy.example.com:3128.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	HTTPProxy string `json:"httpProxy,omitempty"`

	// HTTPSProxy is the proxy URL for HTTPS requests, such as https://proxy.example.com:3129.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	HTTPSProxy string `json:"httpsProxy,omitempty"`

	// CABundle is the PEM CA bundle that verifies the HTTPSProxy server's certificate.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`

	// NoProxy lists, comma-separated, the hosts, domains, IPs and CIDRs reached without the
	// proxy.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	NoProxy string `json:"noProxy,omitempty"`
}

// ContainerResourceRequirements sets the compute resources of the agent containers it matches.
type ContainerResourceRequirements struct {
	// ContainerID selects containers as <resource type>:<resource name>:<container name>; the
	// type is deployments, daemonsets, statefulsets, replicasets, jobs, cronjobs or pods, and any
	// part may be * (so *:*:* is every container of the agent).
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^(deployments|daemonsets|statefulsets|replicasets|jobs|cronjobs|pods|\*):.+:.+$`
	ContainerID string `json:"containerID"`

	// Resources are the requests and limits given to the matched containers.
	// +required
	Resources corev1.ResourceRequirements `json:"resources"`
}

// AddOnDeploymentConfigList is a list of AddOnDeploymentConfigs.
//
// +kubebuilder:object:root=true
type AddOnDeploymentConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AddOnDeploymentConfig `json:"items"`
}
