package v1beta2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterSetLabel on a ManagedCluster names the set it belongs to when the set's selector type is
// ExclusiveClusterSetLabel.
const ClusterSetLabel = "cluster.open-cluster-management.io/clusterset"

// ManagedClusterSet is a group of ManagedClusters that workloads can be placed on. Members are
// chosen by the ClusterSetLabel (ExclusiveClusterSetLabel, the default) or by a label selector.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={mclset,mclsets}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Empty",type="string",JSONPath=".status.conditions[?(@.type==\"ClusterSetEmpty\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ManagedClusterSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says how members are selected.
	// +optional
	// +kubebuilder:default={clusterSelector:{selectorType:ExclusiveClusterSetLabel}}
	Spec ManagedClusterSetSpec `json:"spec"`

	// Status reports whether the set has members.
	// +optional
	Status ManagedClusterSetStatus `json:"status,omitempty"`
}

// ManagedClusterSetSpec says how the set selects its clusters.
type ManagedClusterSetSpec struct {
	// ClusterSelector selects the member clusters.
	// +optional
	// +kubebuilder:default={selectorType:ExclusiveClusterSetLabel}
	ClusterSelector ManagedClusterSelector `json:"clusterSelector,omitempty"`

	// ManagedNamespaces are namespaces to create on every member cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	ManagedNamespaces []ManagedNamespaceConfig `json:"managedNamespaces,omitempty"`
}

// SelectorType says how a set chooses its members.
// +kubebuilder:validation:Enum=ExclusiveClusterSetLabel;LabelSelector
type SelectorType string

const (
	// ExclusiveClusterSetLabel selects clusters whose ClusterSetLabel names the set; a cluster is
	// then in at most one such set.
	ExclusiveClusterSetLabel SelectorType = "ExclusiveClusterSetLabel"
	// LabelSelector selects clusters by spec.clusterSelector.labelSelector.
	LabelSelector SelectorType = "LabelSelector"
)

// ManagedClusterSelector selects the clusters of a set.
//
// +kubebuilder:validation:XValidation:rule="self.selectorType != 'LabelSelector' || has(self.labelSelector)",message="selectorType LabelSelector needs spec.clusterSelector.labelSelector; set it, or use selectorType ExclusiveClusterSetLabel"
type ManagedClusterSelector struct {
	// SelectorType is ExclusiveClusterSetLabel (membership by the cluster label
	// cluster.open-cluster-management.io/clusterset=<set name>) or LabelSelector.
	// +required
	// +kubebuilder:default=ExclusiveClusterSetLabel
	SelectorType SelectorType `json:"selectorType"`

	// LabelSelector selects member clusters by their labels when SelectorType is LabelSelector.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// ManagedNamespaceConfig is a namespace to create on member clusters.
type ManagedNamespaceConfig struct {
	// Name of the namespace.
	// +required
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// ManagedClusterSetStatus is the observed state of a set.
type ManagedClusterSetStatus struct {
	// Conditions: ClusterSetEmpty is True when no cluster belongs to the set.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedClusterSetConditionEmpty is True when the set has no member.
const ManagedClusterSetConditionEmpty = "ClusterSetEmpty"

// ManagedClusterSetList is a list of ManagedClusterSets.
//
// +kubebuilder:object:root=true
type ManagedClusterSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedClusterSet `json:"items"`
}
