package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagedCluster is the hub's record of one spoke cluster; its name is the cluster's name, and the
// hub keeps the cluster's namespace (same name) while the cluster is accepted.
//
// Joining takes two consents: the spoke's agent creates the ManagedCluster and a certificate
// signing request, and a hub administrator both approves the request and sets
// spec.hubAcceptsClient to true. The agent then renews a lease every spec.leaseDurationSeconds
// and reports the cluster's state in status.
//
// The names managed-clusters, cluster and addon are refused when a cluster is created: its agents
// would be known by names that belong to other identities.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={mcl,mcls}
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || !(self.metadata.name in ['managed-clusters', 'cluster', 'addon'])",optionalOldSelf=true,message="metadata.name managed-clusters, cluster and addon are reserved: the cluster's agents would be known by another identity's names (system:open-cluster-management:<name>); register the cluster under another name (flotilla agent --cluster-name)"
// +kubebuilder:printcolumn:name="Hub Accepted",type="boolean",JSONPath=".spec.hubAcceptsClient"
// +kubebuilder:printcolumn:name="Managed Cluster URLs",type="string",JSONPath=".spec.managedClusterClientConfigs[*].url"
// +kubebuilder:printcolumn:name="Joined",type="string",JSONPath=".status.conditions[?(@.type==\"ManagedClusterJoined\")].status"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=".status.conditions[?(@.type==\"ManagedClusterConditionAvailable\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ManagedCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the hub and the agent agree on: acceptance, API server addresses, lease
	// period and taints.
	// +optional
	Spec ManagedClusterSpec `json:"spec"`

	// Status is what the agent and the hub observe about the cluster.
	// +optional
	Status ManagedClusterStatus `json:"status,omitempty"`
}

// ManagedClusterSpec is the desired configuration of a managed cluster.
type ManagedClusterSpec struct {
	// ManagedClusterClientConfigs are the addresses at which the hub can reach the cluster's API
	// server; empty when the hub cannot reach it.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	ManagedClusterClientConfigs []ClientConfig `json:"managedClusterClientConfigs,omitempty"`

	// HubAcceptsClient is the hub's consent to the cluster joining. Only users allowed to update
	// the virtual subresource register.open-cluster-management.io managedclusters/accept may set
	// it to true. While true the hub keeps the cluster's namespace and the agent's permissions in
	// it; setting it back to false removes them.
	// +optional
	HubAcceptsClient bool `json:"hubAcceptsClient"`

	// LeaseDurationSeconds is how often, in seconds, the agent renews its lease on the hub
	// (default 60; 0 also means 60). The hub marks the cluster unreachable when the lease has not
	// been renewed for 5 such periods (LeaseGraceFactor).
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	LeaseDurationSeconds int32 `json:"leaseDurationSeconds,omitempty"`

	// Taints keep placements that do not tolerate them away from the cluster. The hub adds and
	// removes the unreachable and unavailable taints itself; the agent may not touch those two.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Taints []Taint `json:"taints,omitempty"`
}

// ClientConfig is one address of the managed cluster's API server.
type ClientConfig struct {
	// URL of the cluster's API server; it must be an absolute https URL.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() == 'https' && url(self).getHost() != ''",message="spec.managedClusterClientConfigs[].url must be an absolute https URL of the cluster's API server, such as https://api.gpu-east-1.example.com:6443"
	URL string `json:"url"`

	// CABundle is the PEM bundle of certificate authorities to trust when connecting to the URL;
	// when empty the system's trusted authorities are used.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// TaintEffect is what a taint does to placements that do not tolerate it.
// +kubebuilder:validation:Enum=NoSelect;PreferNoSelect;NoSelectIfNew
type TaintEffect string

const (
	// TaintEffectNoSelect keeps the cluster out of every placement that does not tolerate the
	// taint, and removes it from the decisions it is already in.
	TaintEffectNoSelect TaintEffect = "NoSelect"
	// TaintEffectPreferNoSelect asks the scheduler to avoid the cluster; it never filters it out.
	TaintEffectPreferNoSelect TaintEffect = "PreferNoSelect"
	// TaintEffectNoSelectIfNew keeps the cluster out of placements that have not already chosen
	// it; placements that have keep it.
	TaintEffectNoSelectIfNew TaintEffect = "NoSelectIfNew"
)

// Taint marks a managed cluster so that placements not tolerating it avoid the cluster.
type Taint struct {
	// Key identifies the taint: a name, optionally prefixed by a DNS subdomain and a slash, such
	// as gpu.flotilla.io/maintenance.
	// +required
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Key string `json:"key"`

	// Value is the taint's value, matched by tolerations with operator Equal.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`

	// Effect is NoSelect, PreferNoSelect or NoSelectIfNew.
	// +required
	Effect TaintEffect `json:"effect"`

	// TimeAdded is when the taint was added; tolerationSeconds count from it.
	// +optional
	// +nullable
	TimeAdded *metav1.Time `json:"timeAdded,omitempty"`
}

// ManagedClusterStatus is the observed state of a managed cluster.
type ManagedClusterStatus struct {
	// Conditions: ManagedClusterJoined, HubAcceptedManagedCluster, HubDeniedManagedCluster,
	// ManagedClusterConditionAvailable (the cluster's health; Unknown when the lease lapsed) and
	// ManagedClusterConditionClockSynced.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Capacity is the total of every node's capacity, by resource name (cpu, memory,
	// nvidia.com/gpu, ...).
	// +optional
	Capacity ResourceList `json:"capacity,omitempty"`

	// Allocatable is the total of every node's allocatable resources, by resource name.
	// +optional
	Allocatable ResourceList `json:"allocatable,omitempty"`

	// Version is the cluster's software version.
	// +optional
	Version ManagedClusterVersion `json:"version,omitempty"`

	// ClusterClaims are the ClusterClaims the agent copied from the cluster: every reserved claim
	// (id.k8s.io, kubeversion.open-cluster-management.io, ...) and up to a configured number of
	// custom ones. Not every cluster reports the same claims.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	ClusterClaims []ManagedClusterClaim `json:"clusterClaims,omitempty"`

	// ManagedNamespaces are the namespaces that the cluster sets this cluster belongs to ask to
	// have on it, with their state. Its length follows the sets' configuration, so it is not
	// bounded here.
	// +optional
	// +listType=map
	// +listMapKey=clusterSet
	// +listMapKey=name
	ManagedNamespaces []ClusterSetManagedNamespaceConfig `json:"managedNamespaces,omitempty"`
}

// ResourceName names a resource, such as cpu, memory or nvidia.com/gpu.
type ResourceName string

// ResourceList maps resource names to quantities.
type ResourceList map[ResourceName]resource.Quantity

// ManagedClusterVersion is the software version of a managed cluster.
type ManagedClusterVersion struct {
	// Kubernetes is the cluster's Kubernetes version, such as v1.31.4.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Kubernetes string `json:"kubernetes,omitempty"`
}

// ManagedClusterClaim is one ClusterClaim copied from the managed cluster.
type ManagedClusterClaim struct {
	// Name is the ClusterClaim's name, such as id.k8s.io or region.open-cluster-management.io.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value is the claim's value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`
}

// ClusterSetManagedNamespaceConfig is a namespace a cluster set asks to have on its member
// clusters, with its state on this cluster.
type ClusterSetManagedNamespaceConfig struct {
	// Name of the namespace.
	// +required
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// ClusterSet is the name of the ManagedClusterSet that asks for the namespace.
	// +required
	// +kubebuilder:validation:MaxLength=253
	ClusterSet string `json:"clusterSet"`

	// Conditions report the namespace's state on the cluster.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedClusterList is a list of ManagedClusters.
//
// +kubebuilder:object:root=true
type ManagedClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedCluster `json:"items"`
}
