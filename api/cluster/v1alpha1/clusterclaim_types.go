package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterClaim is a fact a managed cluster states about itself, such as its unique id, its
// Kubernetes version or its region. It lives on the spoke; the agent copies claims into
// status.clusterClaims of the cluster's ManagedCluster on the hub, where placements select
// clusters by them. The object's name is the claim's name.
//
// The agent always copies the reserved claims (id.k8s.io, kubeversion.open-cluster-management.io,
// platform.open-cluster-management.io, product.open-cluster-management.io) and at most a
// configured number of the others (20 by default); claims labeled
// open-cluster-management.io/spoke-only are never copied.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type ClusterClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the claim's value.
	// +required
	Spec ClusterClaimSpec `json:"spec"`
}

// ClusterClaimSpec is the content of a claim.
type ClusterClaimSpec struct {
	// Value is what the cluster claims, 1 to 1024 characters; its meaning depends on the claim.
	// It is required because the hub cannot record a claim without one.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`
}

// Well-known claim names. The first four are reserved: the agent always copies them to the hub,
// ahead of custom claims and outside their cap.
const (
	// ClusterClaimID is the cluster's unique id within the fleet.
	ClusterClaimID = "id.k8s.io"
	// ClusterClaimKubeVersion is the cluster's Kubernetes version.
	ClusterClaimKubeVersion = "kubeversion.open-cluster-management.io"
	// ClusterClaimPlatform is the infrastructure the cluster runs on, such as AWS or GCP.
	ClusterClaimPlatform = "platform.open-cluster-management.io"
	// ClusterClaimProduct is the Kubernetes distribution, such as EKS, GKE or OpenShift.
	ClusterClaimProduct = "product.open-cluster-management.io"
	// ClusterClaimClusterSet names the ClusterSet the cluster belongs to (SIG-Multicluster); it is
	// well known but not reserved.
	ClusterClaimClusterSet = "clusterset.k8s.io"
)

// ReservedClusterClaimNames returns the names of the reserved claims, in priority order.
func ReservedClusterClaimNames() []string {
	return []string{ClusterClaimID, ClusterClaimKubeVersion, ClusterClaimPlatform, ClusterClaimProduct}
}

// IsReservedClusterClaim reports whether name is a reserved claim's name.
func IsReservedClusterClaim(name string) bool {
	switch name {
	case ClusterClaimID, ClusterClaimKubeVersion, ClusterClaimPlatform, ClusterClaimProduct:
		return true
	}
	return false
}

// ClusterClaimSpokeOnlyLabel on a ClusterClaim keeps it on the spoke: the agent does not copy it
// to the hub.
const ClusterClaimSpokeOnlyLabel = "open-cluster-management.io/spoke-only"

// DefaultMaxCustomClusterClaims is how many non-reserved claims the agent copies to the hub
// unless configured otherwise.
const DefaultMaxCustomClusterClaims = 20

// ClusterClaimList is a list of ClusterClaims.
//
// +kubebuilder:object:root=true
type ClusterClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterClaim `json:"items"`
}
