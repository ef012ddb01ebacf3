package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ManifestWork is a set of Kubernetes objects for one managed cluster. It is created in that
// cluster's namespace on the hub; the cluster's work agent applies the objects on the spoke,
// reports their state in the status, and removes them (per spec.deleteOption) when the
// ManifestWork is deleted.
//
// The whole object may be at most 500 KiB of manifests (OCM enforces this in an admission
// webhook: a size limit cannot be expressed in the schema of embedded objects, so here only the
// number of manifests is bounded).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type ManifestWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to apply on the managed cluster and how.
	// +optional
	Spec ManifestWorkSpec `json:"spec"`

	// Status is what the work agent observed on the managed cluster.
	// +optional
	Status ManifestWorkStatus `json:"status,omitempty"`
}

// ManifestWorkSpec is what a ManifestWork applies and how. ManifestWorkReplicaSet uses it as the
// template of the ManifestWorks it creates.
type ManifestWorkSpec struct {
	// Workload holds the objects to apply.
	// +optional
	Workload ManifestsTemplate `json:"workload,omitzero"`

	// DeleteOption says what happens to the applied objects when the ManifestWork is deleted or
	// an object is dropped from it. Unset means Foreground: every object is deleted.
	// +optional
	DeleteOption *DeleteOption `json:"deleteOption,omitempty"`

	// ManifestConfigs tune individual objects of the workload: which status fields to report back,
	// how to update them, and which conditions to derive from them. Each entry names one object by
	// its resourceIdentifier; at most one entry may name a given object.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(d, d.resourceIdentifier.resource == c.resourceIdentifier.resource && d.resourceIdentifier.name == c.resourceIdentifier.name && (has(d.resourceIdentifier.group) ? d.resourceIdentifier.group : \"\") == (has(c.resourceIdentifier.group) ? c.resourceIdentifier.group : \"\") && (has(d.resourceIdentifier.__namespace__) ? d.resourceIdentifier.__namespace__ : \"\") == (has(c.resourceIdentifier.__namespace__) ? c.resourceIdentifier.__namespace__ : \"\")))",message="manifestConfigs has two entries with the same resourceIdentifier (group, resource, name and namespace): merge them into one entry per object"
	ManifestConfigs []ManifestConfigOption `json:"manifestConfigs,omitempty"`

	// Executor is the identity the work agent applies the objects as on the managed cluster. Unset
	// means the agent's own identity.
	// +optional
	Executor *ManifestWorkExecutor `json:"executor,omitempty"`
}

// ManifestsTemplate holds the objects of a workload.
type ManifestsTemplate struct {
	// Manifests are the objects to apply, each a whole Kubernetes object with apiVersion, kind and
	// metadata. Namespaces and CRDs are applied before the objects that need them.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one whole Kubernetes object to apply on the managed cluster, kept as given (unknown
// fields are preserved; apiVersion, kind and metadata are checked like those of any object).
type Manifest struct {
	// RawExtension holds the object's JSON.
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// ManifestWorkList is a list of ManifestWorks.
//
// +kubebuilder:object:root=true
type ManifestWorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManifestWork `json:"items"`
}
