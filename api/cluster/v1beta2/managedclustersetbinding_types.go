package v1beta2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ManagedClusterSetBinding makes a ManagedClusterSet usable by Placements in the binding's
// namespace. Its name must equal spec.clusterSet.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName={mclsetbinding,mclsetbindings}
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.clusterSet",message="metadata.name must equal spec.clusterSet: name the binding after the set it binds"
type ManagedClusterSetBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the bound set.
	// +required
	Spec ManagedClusterSetBindingSpec `json:"spec"`

	// Status reports whether the set is bound.
	// +optional
	Status ManagedClusterSetBindingStatus `json:"status,omitempty"`
}

// ManagedClusterSetBindingSpec names the set to bind.
type ManagedClusterSetBindingSpec struct {
	// ClusterSet is the name of the ManagedClusterSet to bind; it must equal the binding's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	ClusterSet string `json:"clusterSet"`
}

// ManagedClusterSetBindingStatus is the observed state of a binding.
type ManagedClusterSetBindingStatus struct {
	// Conditions: Bound is True when the set exists and the binding is in effect.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterSetBindingBoundType is the condition saying a binding is in effect.
const ClusterSetBindingBoundType = "Bound"

// ManagedClusterSetBindingList is a list of ManagedClusterSetBindings.
//
// +kubebuilder:object:root=true
type ManagedClusterSetBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedClusterSetBinding `json:"items"`
}
