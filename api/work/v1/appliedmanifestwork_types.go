package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AppliedManifestWork is a managed cluster's record of a ManifestWork it applied: which hub and
// ManifestWork it came from, and which objects it created. It lives on the spoke, not the hub, and
// is named <spec.hubHash>-<spec.manifestWorkName>. Deleting it removes the objects it records,
// which lets a spoke's admin clean up after a hub that is gone.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.hubHash + '-' + self.spec.manifestWorkName",message="metadata.name must be spec.hubHash-spec.manifestWorkName: name the AppliedManifestWork after the hub hash and the ManifestWork, joined by a dash"
type AppliedManifestWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which hub and ManifestWork this record belongs to.
	// +required
	Spec AppliedManifestWorkSpec `json:"spec"`

	// Status lists the objects applied for the ManifestWork.
	// +optional
	Status AppliedManifestWorkStatus `json:"status,omitempty"`
}

// AppliedManifestWorkSpec says which hub and ManifestWork an AppliedManifestWork belongs to.
type AppliedManifestWorkSpec struct {
	// HubHash identifies the hub: a hash of the URL of the hub's first API server.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	HubHash string `json:"hubHash"`

	// AgentID identifies the work agent that handles this record.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	AgentID string `json:"agentID,omitempty"`

	// ManifestWorkName is the name of the ManifestWork on the hub (in this cluster's namespace).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ManifestWorkName string `json:"manifestWorkName"`
}

// AppliedManifestWorkStatus lists what the agent applied for a ManifestWork.
type AppliedManifestWorkStatus struct {
	// AppliedResources are the objects of the workload the agent applied. An object dropped from
	// the workload (or left when the ManifestWork is deleted) is deleted from the managed cluster
	// and then from this list; it may linger on the cluster until its finalizers finish.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	AppliedResources []AppliedManifestResourceMeta `json:"appliedResources,omitempty"`

	// EvictionStartTime is when the agent found this record orphaned: its ManifestWork is gone
	// from the hub, or its hubHash is not the agent's current hub. The record and its objects are
	// removed once an eviction grace period has passed.
	// +optional
	EvictionStartTime *metav1.Time `json:"evictionStartTime,omitempty"`
}

// AppliedManifestResourceMeta identifies one object applied on the managed cluster.
type AppliedManifestResourceMeta struct {
	// Group is the object's API group; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`

	// Version is the API version the object was applied at.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Version string `json:"version"`

	// Resource is the object's resource (plural, lower case), for example jobs.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Resource string `json:"resource"`

	// Name is the object's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace is the object's namespace; empty for a cluster-scoped object.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// UID is the UID of the object the agent asked the managed cluster to delete, set by the
	// agent once that delete succeeded (the object may linger until its finalizers finish). It
	// lets the agent tell that object from a later one of the same name.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	UID string `json:"uid,omitempty"`
}

// AppliedManifestWorkList is a list of AppliedManifestWorks.
//
// +kubebuilder:object:root=true
type AppliedManifestWorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppliedManifestWork `json:"items"`
}
