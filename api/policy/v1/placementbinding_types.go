package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PlacementBinding binds a Placement in its own namespace to Policies and PolicySets of that
// namespace: each decided cluster gets the policies.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=placementbindings,scope=Namespaced,shortName=pb
type PlacementBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// PlacementRef names the Placement, in the binding's namespace.
	// +required
	PlacementRef PlacementSubject `json:"placementRef"`
	// Subjects are the Policies and PolicySets, in the binding's namespace, it places.
	// +required
	// +kubebuilder:validation:MinItems=1
	Subjects []Subject `json:"subjects"`
	// BindingOverrides change the subjects on this binding's clusters.
	// +optional
	BindingOverrides BindingOverrides `json:"bindingOverrides,omitempty"`
	// SubFilter restricted: the binding applies its overrides to clusters other bindings place
	// the policy on, and places it nowhere itself.
	// +optional
	// +kubebuilder:validation:Enum=restricted
	SubFilter SubFilter `json:"subFilter,omitempty"`
	// +optional
	Status PlacementBindingStatus `json:"status,omitzero"`
}

// Subject is a Policy or PolicySet to place.
type Subject struct {
	// +required
	// +kubebuilder:validation:Enum=policy.open-cluster-management.io
	// +kubebuilder:validation:MinLength=1
	APIGroup string `json:"apiGroup"`
	// +required
	// +kubebuilder:validation:Enum=Policy;PolicySet
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// PlacementSubject names the placement. Flotilla serves Placement; OCM's deprecated
// PlacementRule is accepted by the schema and places nothing.
type PlacementSubject struct {
	// +required
	// +kubebuilder:validation:Enum=apps.open-cluster-management.io;cluster.open-cluster-management.io
	// +kubebuilder:validation:MinLength=1
	APIGroup string `json:"apiGroup"`
	// +required
	// +kubebuilder:validation:Enum=PlacementRule;Placement
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// BindingOverrides override the subjects' fields on the binding's clusters.
type BindingOverrides struct {
	// RemediationAction enforce makes the binding's clusters enforce the subjects.
	// +optional
	// +kubebuilder:validation:Enum=Enforce;enforce
	RemediationAction string `json:"remediationAction,omitempty"`
}

// SubFilter is restricted or empty.
type SubFilter string

// Restricted is the only SubFilter.
const Restricted SubFilter = "restricted"

// PlacementBindingStatus is empty, as OCM's.
type PlacementBindingStatus struct{}

// PlacementBindingList is a list of PlacementBindings.
//
// +kubebuilder:object:root=true
type PlacementBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlacementBinding `json:"items"`
}
