package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterPredicate is one way a cluster can qualify for a placement.
type ClusterPredicate struct {
	// RequiredClusterSelector must match a cluster for this predicate to let it through. A chosen
	// cluster that stops matching is removed from the decisions; one that starts matching becomes
	// a candidate.
	// +optional
	RequiredClusterSelector ClusterSelector `json:"requiredClusterSelector,omitempty"`
}

// ClusterSelector matches ManagedClusters by labels, by cluster claims and by CEL expressions;
// a cluster matches when every part that is set matches (they are ANDed).
type ClusterSelector struct {
	// LabelSelector matches the ManagedCluster's labels.
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`

	// ClaimSelector matches the ManagedCluster's cluster claims (status.clusterClaims).
	// +optional
	ClaimSelector ClusterClaimSelector `json:"claimSelector,omitempty"`

	// CelSelector matches CEL expressions evaluated against the ManagedCluster.
	// +optional
	CelSelector ClusterCelSelector `json:"celSelector,omitempty"`
}

// ClusterClaimSelector matches clusters by the claims in their status.clusterClaims, as a label
// selector matches labels: the claim name is the key and the claim value the value.
type ClusterClaimSelector struct {
	// MatchExpressions are requirements on claims (key is the claim name; operator In, NotIn,
	// Exists or DoesNotExist). They are ANDed.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ClusterCelSelector matches clusters by CEL expressions. Each expression sees the cluster as the
// variable managedCluster and must return a boolean; managedCluster.scores("<AddOnPlacementScore
// name>") returns that score object's list of {name, value}.
type ClusterCelSelector struct {
	// CelExpressions must all evaluate to true for a cluster to match (they are ANDed), for example
	// managedCluster.metadata.labels["accelerator"] == "nvidia-tesla-t4".
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=4096
	CelExpressions []string `json:"celExpressions,omitempty"`
}

// GroupClusterSelector matches the clusters of a named decision group, by labels and by claims.
type GroupClusterSelector struct {
	// LabelSelector matches the ManagedCluster's labels.
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`

	// ClaimSelector matches the ManagedCluster's cluster claims.
	// +optional
	ClaimSelector ClusterClaimSelector `json:"claimSelector,omitempty"`
}
