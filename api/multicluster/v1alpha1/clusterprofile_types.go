package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	// LabelClusterManagerKey on a ClusterProfile names the cluster manager that owns it; its value
	// equals spec.clusterManager.name, so consumers can list one manager's profiles.
	LabelClusterManagerKey = "x-k8s.io/cluster-manager"
	// LabelClusterNameKey on a ClusterProfile names the ManagedCluster it presents.
	LabelClusterNameKey = "open-cluster-management.io/cluster-name"
	// ClusterManagerName is the cluster manager name (spec.clusterManager.name and the
	// LabelClusterManagerKey value) written on the ClusterProfiles the hub maintains, the same
	// name OCM uses.
	ClusterManagerName = "open-cluster-management"
	// AccessProviderName is the access provider the hub writes on each of its profiles, the name
	// OCM's documentation tells consumers (Kueue's MultiKueue, Argo CD) to configure their
	// credentials plugin under.
	AccessProviderName = "open-cluster-management"
)

const (
	// ClusterConditionControlPlaneHealthy is True when the cluster's control plane is reachable
	// and healthy (taken from the ManagedCluster's Available condition).
	ClusterConditionControlPlaneHealthy = "ControlPlaneHealthy"
	// ClusterConditionJoined is True when the cluster has joined the fleet (its agent registered
	// and was accepted by the hub).
	ClusterConditionJoined = "Joined"
)

// ClusterProfile presents one cluster of the fleet to multi-cluster consumers (schedulers, job
// dispatchers, GitOps tools): who manages it, its version and properties, whether it is healthy,
// and how to reach it. The hub keeps one per member cluster in every namespace bound to a set.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type ClusterProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the cluster manager that owns the profile.
	// +required
	Spec ClusterProfileSpec `json:"spec"`

	// Status is what the cluster manager observed of the cluster.
	// +optional
	Status ClusterProfileStatus `json:"status,omitempty"`
}

// ClusterProfileSpec is the part of a ClusterProfile its owner sets.
type ClusterProfileSpec struct {
	// DisplayName is a human-readable name for the cluster, for user interfaces.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DisplayName string `json:"displayName,omitempty"`

	// ClusterManager is the cluster manager that owns and updates this profile. It cannot be
	// changed once set.
	// +required
	ClusterManager ClusterManager `json:"clusterManager"`
}

// ClusterManager identifies the cluster manager that owns a ClusterProfile.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.clusterManager is immutable: to hand the cluster to another manager, delete the ClusterProfile and create it again"
type ClusterManager struct {
	// Name of the cluster manager, for example open-cluster-management.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ClusterProfileStatus is what the cluster manager reports about the cluster.
type ClusterProfileStatus struct {
	// Conditions: ClusterConditionControlPlaneHealthy and ClusterConditionJoined, and any the
	// cluster manager adds.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Version is the cluster's software version.
	// +optional
	Version ClusterVersion `json:"version,omitempty"`

	// Properties are facts about the cluster (location, node types, claims, KEP-2149
	// ClusterProperty values, or names the cluster manager defines), one per name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=256
	Properties []Property `json:"properties,omitempty"`

	// AccessProviders say how to reach the cluster's API server, one entry per way of obtaining
	// credentials (for example kubeconfig or an OIDC provider).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	AccessProviders []AccessProvider `json:"accessProviders,omitempty"`

	// CredentialProviders is the former name of AccessProviders, still read by older consumers.
	// When both name the same provider, the AccessProviders entry wins.
	//
	// Deprecated: use AccessProviders.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	CredentialProviders []AccessProvider `json:"credentialProviders,omitempty"`
}

// ClusterVersion is the software version of a cluster.
type ClusterVersion struct {
	// Kubernetes is the version of the cluster's Kubernetes API server, for example v1.37.2.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Kubernetes string `json:"kubernetes,omitempty"`
}

// Property is one named fact about a cluster and when it was last seen.
type Property struct {
	// Name identifies the property: a well-known ClusterProperty name or one the cluster
	// manager defines.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value of the property; its meaning depends on the name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`

	// LastObservedTime is when the property was last observed on the cluster (not when the
	// profile was written).
	// +optional
	LastObservedTime *metav1.Time `json:"lastObservedTime,omitempty"`
}

// AccessProvider is one way to reach a cluster: the provider's name, which a consumer matches
// with its own credential plugin, and the connection details of the cluster's API server.
type AccessProvider struct {
	// Name identifies the provider, for example open-cluster-management or a kubeconfig/OIDC
	// provider known to consumers.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Cluster is how to connect to the cluster's API server, in the shape of a kubeconfig
	// cluster entry.
	// +optional
	Cluster *ClusterConnection `json:"cluster,omitempty"`
}

// ClusterConnection is how to connect to a cluster's API server. Its fields and JSON names are
// those of a kubeconfig cluster entry, so a consumer can drop it into a kubeconfig.
type ClusterConnection struct {
	// Server is the API server's URL, https://host:port.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	Server string `json:"server"`

	// TLSServerName is the name checked against the server's certificate; when empty, the host
	// of Server is used.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	TLSServerName string `json:"tls-server-name,omitempty"`

	// InsecureSkipTLSVerify turns off checking of the server's certificate. It makes the
	// connection insecure: use it for tests only.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecure-skip-tls-verify,omitempty"`

	// CertificateAuthority is the path of a file holding the CA certificates to trust, on the
	// consumer's machine.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	CertificateAuthority string `json:"certificate-authority,omitempty"`

	// CertificateAuthorityData holds PEM-encoded CA certificates to trust; it takes precedence
	// over CertificateAuthority.
	// +optional
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`

	// ProxyURL is the http, https or socks5 proxy to send every request through; when empty, the
	// http_proxy and https_proxy environment variables apply. socks5 does not carry streaming
	// requests (exec, attach, port-forward).
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	ProxyURL string `json:"proxy-url,omitempty"`

	// DisableCompression asks the server not to compress responses, which saves time when the
	// network is fast.
	// +optional
	DisableCompression bool `json:"disable-compression,omitempty"`

	// Extensions carry extra, tool-specific information about the connection, kept as written.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Extensions []NamedExtension `json:"extensions,omitempty"`
}

// NamedExtension is a tool-specific extension of a cluster connection, under a name.
type NamedExtension struct {
	// Name identifies the extension.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Extension is the extension's content, any JSON object, kept as written.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	Extension runtime.RawExtension `json:"extension"`
}

// ClusterProfileList is a list of ClusterProfiles.
//
// +kubebuilder:object:root=true
type ClusterProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProfile `json:"items"`
}
