package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// PolicySet groups Policies of its namespace so that one PlacementBinding places them all.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=policysets,scope=Namespaced,shortName=plcset
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
type PolicySet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PolicySetSpec `json:"spec"`
	// +optional
	Status PolicySetStatus `json:"status,omitempty"`
}

// NonEmptyString is a string of at least one character.
//
// +kubebuilder:validation:MinLength=1
type NonEmptyString string

// PolicySetSpec lists the set's policies.
type PolicySetSpec struct {
	// +optional
	Description string `json:"description,omitempty"`
	// Policies are the names of Policies in the set's namespace.
	// +required
	Policies []NonEmptyString `json:"policies"`
	// Exclusions keep a policy of the set off some clusters (when placed through the set).
	// +optional
	Exclusions []PolicySetExclusion `json:"exclusions,omitempty"`
}

// PolicySetExclusion keeps one policy of the set off some clusters.
type PolicySetExclusion struct {
	// +required
	PolicyName NonEmptyString `json:"policyName"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +required
	// +kubebuilder:validation:MinItems=1
	ClusterNames []NonEmptyString `json:"clusterNames"`
}

// PolicySetStatusPlacement is a binding that places the set.
type PolicySetStatusPlacement struct {
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
	// +optional
	Placement string `json:"placement,omitempty"`
	// +optional
	PlacementRule string `json:"placementRule,omitempty"`
}

// PolicySetStatusExclusion is a policy kept off some clusters.
type PolicySetStatusExclusion struct {
	// +required
	PolicyName NonEmptyString `json:"policyName"`
	// +required
	Clusters []NonEmptyString `json:"clusters"`
}

// PolicySetStatus sums the set's policies on the set's clusters.
type PolicySetStatus struct {
	// +optional
	Placement []PolicySetStatusPlacement `json:"placement,omitempty"`
	// +optional
	Compliant policyv1.ComplianceState `json:"compliant,omitempty"`
	// +optional
	StatusMessage string `json:"statusMessage,omitempty"`
	// +optional
	Exclusions []PolicySetStatusExclusion `json:"exclusions,omitempty"`
}

// PolicySetList is a list of PolicySets.
//
// +kubebuilder:object:root=true
type PolicySetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PolicySet `json:"items"`
}
