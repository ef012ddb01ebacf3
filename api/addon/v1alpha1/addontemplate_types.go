package v1alpha1

import (
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddOnTemplate describes an add-on without code: the manifests of its agent (deployed to each
// cluster as a ManifestWork) and how the agent registers with the hub. A ClusterManagementAddOn
// uses it by naming it as a configuration (group addon.open-cluster-management.io, resource
// addontemplates). It is read on the hub only.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="ADDON NAME",type="string",JSONPath=".spec.addonName"
type AddOnTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the agent's manifests and registrations.
	// +required
	Spec AddOnTemplateSpec `json:"spec"`
}

// AddOnTemplateSpec is an add-on agent's manifests and registrations.
type AddOnTemplateSpec struct {
	// AddonName is the name of the add-on (its ClusterManagementAddOn) the template is for.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	AddonName string `json:"addonName"`

	// AgentSpec is the agent's manifests and how they are applied: a ManifestWork's spec, which
	// the add-on manager turns into a ManifestWork per cluster.
	// +required
	AgentSpec workv1.ManifestWorkSpec `json:"agentSpec"`

	// Registration says how the agent gets credentials for the hub: a CSR per entry, approved
	// automatically; the signed credentials land in the agent's install namespace.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Registration []RegistrationSpec `json:"registration,omitempty"`
}

// RegistrationType is how an add-on agent registers with the hub.
// +kubebuilder:validation:Enum=KubeClient;CustomSigner
type RegistrationType string

const (
	// RegistrationTypeKubeClient gives the agent a kubeconfig for the hub's kube-apiserver
	// (signer kubernetes.io/kube-apiserver-client), stored in <addon>-hub-kubeconfig.
	RegistrationTypeKubeClient RegistrationType = "KubeClient"
	// RegistrationTypeCustomSigner gives the agent a client certificate from the add-on's own CA,
	// for endpoints of its own, stored in <addon>-<signer>-client-cert.
	RegistrationTypeCustomSigner RegistrationType = "CustomSigner"
)

// RegistrationSpec is one set of hub credentials for an add-on agent.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'CustomSigner' || has(self.customSigner)",message="spec.registration[].customSigner is required when type is CustomSigner: set customSigner.signerName and customSigner.signingCA, or use type KubeClient"
type RegistrationSpec struct {
	// Type is KubeClient (access to the hub's kube-apiserver) or CustomSigner (a certificate
	// signed by the add-on's own CA).
	// +required
	Type RegistrationType `json:"type"`

	// KubeClient configures the KubeClient type: what the agent may do on the hub.
	// +optional
	KubeClient *KubeClientRegistrationConfig `json:"kubeClient,omitempty"`

	// CustomSigner configures the CustomSigner type; required with it.
	// +optional
	CustomSigner *CustomSignerRegistrationConfig `json:"customSigner,omitempty"`
}

// KubeClientRegistrationConfig configures a KubeClient registration.
type KubeClientRegistrationConfig struct {
	// HubPermissions are the roles the agent's identity is bound to on the hub.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	HubPermissions []HubPermissionConfig `json:"hubPermissions,omitempty"`
}

// HubPermissionsBindingType says where on the hub an agent's role is bound.
// +kubebuilder:validation:Enum=CurrentCluster;SingleNamespace
type HubPermissionsBindingType string

const (
	// HubPermissionsBindingCurrentCluster binds a ClusterRole in the namespace of the agent's own
	// cluster.
	HubPermissionsBindingCurrentCluster HubPermissionsBindingType = "CurrentCluster"
	// HubPermissionsBindingSingleNamespace binds a Role or ClusterRole in one named namespace.
	HubPermissionsBindingSingleNamespace HubPermissionsBindingType = "SingleNamespace"
)

// HubPermissionConfig binds a role on the hub to the agent's group
// system:open-cluster-management:cluster:<cluster>:addon:<addon>.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'CurrentCluster' || has(self.currentCluster)",message="hubPermissions[].currentCluster is required when type is CurrentCluster: set currentCluster.clusterRoleName"
// +kubebuilder:validation:XValidation:rule="self.type != 'SingleNamespace' || has(self.singleNamespace)",message="hubPermissions[].singleNamespace is required when type is SingleNamespace: set singleNamespace.namespace and singleNamespace.roleRef"
type HubPermissionConfig struct {
	// Type is CurrentCluster (bind in the cluster's own namespace) or SingleNamespace (bind in
	// the namespace singleNamespace names).
	// +required
	Type HubPermissionsBindingType `json:"type"`

	// CurrentCluster configures the CurrentCluster type; required with it.
	// +optional
	CurrentCluster *CurrentClusterBindingConfig `json:"currentCluster,omitempty"`

	// SingleNamespace configures the SingleNamespace type; required with it.
	// +optional
	SingleNamespace *SingleNamespaceBindingConfig `json:"singleNamespace,omitempty"`
}

// CurrentClusterBindingConfig binds a ClusterRole in each cluster's namespace.
type CurrentClusterBindingConfig struct {
	// ClusterRoleName is the ClusterRole to bind; it must exist on the hub.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterRoleName string `json:"clusterRoleName"`
}

// SingleNamespaceBindingConfig binds a role in one namespace.
type SingleNamespaceBindingConfig struct {
	// Namespace is where the RoleBinding is created.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// RoleRef is the Role or ClusterRole to bind; it must exist on the hub.
	// +required
	RoleRef rbacv1.RoleRef `json:"roleRef"`
}

// CustomSignerRegistrationConfig configures a CustomSigner registration.
//
// +kubebuilder:validation:XValidation:rule="self.signerName != 'kubernetes.io/kube-apiserver-client'",message="customSigner.signerName must not be kubernetes.io/kube-apiserver-client: use type KubeClient for hub kube-apiserver access, or name your own signer"
type CustomSignerRegistrationConfig struct {
	// SignerName is the add-on's signer, such as example.com/gpu-metrics.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$`
	SignerName string `json:"signerName"`

	// Subject is the identity in the certificate; empty gives the add-on's default identity.
	// +optional
	Subject *Subject `json:"subject,omitempty"`

	// SigningCA is the kubernetes.io/tls Secret on the hub whose key signs the CSRs. The addon
	// manager must be granted read access to it.
	// +required
	SigningCA SigningCARef `json:"signingCA"`
}

// SigningCARef names the Secret that holds a signing CA.
type SigningCARef struct {
	// Namespace of the Secret; empty means the addon manager's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// AddOnTemplateList is a list of AddOnTemplates.
//
// +kubebuilder:object:root=true
type AddOnTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AddOnTemplate `json:"items"`
}
