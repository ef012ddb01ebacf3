package v1alpha1

import "k8s.io/apimachinery/pkg/runtime"

// The agent part of an AddOnTemplate has the wire shape of a ManifestWork's spec
// (work.open-cluster-management.io/v1), because the hub turns it into one ManifestWork per
// cluster. It is declared here rather than imported so that this package does not depend on the
// work API's Go types; the schema is what must match.

// AddOnAgentSpec is the agent's manifests and how the work agent applies, watches and deletes
// them on the managed cluster.
type AddOnAgentSpec struct {
	// Workload is the manifests to apply.
	// +optional
	Workload AgentWorkload `json:"workload,omitempty"`

	// DeleteOption says what happens to the applied resources when the agent's ManifestWork is
	// deleted; Foreground (delete them all) when unset.
	// +optional
	DeleteOption *DeleteOption `json:"deleteOption,omitempty"`

	// ManifestConfigs tune how individual manifests are updated and what status is reported.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	ManifestConfigs []ManifestConfigOption `json:"manifestConfigs,omitempty"`

	// Executor is the identity the work agent applies the manifests as; unset, the work agent
	// uses its own.
	// +optional
	Executor *ManifestWorkExecutor `json:"executor,omitempty"`
}

// AgentWorkload is the list of manifests of an add-on agent.
type AgentWorkload struct {
	// Manifests are whole Kubernetes objects (with apiVersion and kind) to create on the cluster;
	// they may use the add-on's template variables, such as {{CLUSTER_NAME}}.
	// +optional
	// +kubebuilder:validation:MaxItems=500
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one Kubernetes object to create on the managed cluster.
type Manifest struct {
	// RawExtension holds the object as JSON; the API server checks it has apiVersion, kind and
	// metadata and keeps every other field as given.
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// DeletePropagationPolicyType says what deleting the work does to its resources.
// +kubebuilder:validation:Enum=Foreground;Orphan;SelectivelyOrphan
type DeletePropagationPolicyType string

const (
	// DeletePropagationPolicyForeground deletes every applied resource, then the work.
	DeletePropagationPolicyForeground DeletePropagationPolicyType = "Foreground"
	// DeletePropagationPolicyOrphan leaves every applied resource on the cluster.
	DeletePropagationPolicyOrphan DeletePropagationPolicyType = "Orphan"
	// DeletePropagationPolicySelectivelyOrphan leaves the resources selectivelyOrphans lists and
	// deletes the rest.
	DeletePropagationPolicySelectivelyOrphan DeletePropagationPolicyType = "SelectivelyOrphan"
)

// DeleteOption says what deleting the work does to its resources.
type DeleteOption struct {
	// PropagationPolicy is Foreground (default), Orphan or SelectivelyOrphan.
	// +optional
	// +kubebuilder:default=Foreground
	PropagationPolicy DeletePropagationPolicyType `json:"propagationPolicy,omitempty"`

	// SelectivelyOrphans lists the resources to keep with SelectivelyOrphan.
	// +optional
	SelectivelyOrphans *SelectivelyOrphan `json:"selectivelyOrphans,omitempty"`

	// TTLSecondsAfterFinished deletes the work this many seconds after a condition rule marked it
	// Complete; 0 deletes it at once, unset never.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int64 `json:"ttlSecondsAfterFinished,omitempty"`
}

// SelectivelyOrphan lists the resources a SelectivelyOrphan deletion keeps.
type SelectivelyOrphan struct {
	// OrphaningRules each name one resource of the work to keep.
	// +optional
	// +kubebuilder:validation:MaxItems=500
	OrphaningRules []OrphaningRule `json:"orphaningRules,omitempty"`
}

// OrphaningRule names one resource of the work to keep when the work is deleted.
type OrphaningRule struct {
	// Group is the resource's API group; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`

	// Resource is the plural resource name, such as deployments.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Resource string `json:"resource"`

	// Namespace of the resource; empty for a cluster-scoped resource.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Name of the resource.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ManifestWorkExecutor is the identity the work agent applies manifests as.
type ManifestWorkExecutor struct {
	// Subject is that identity; the work agent checks it may write each manifest first.
	// +optional
	Subject ManifestWorkExecutorSubject `json:"subject,omitempty"`
}

// ExecutorSubjectType is the kind of identity an executor is.
// +kubebuilder:validation:Enum=ServiceAccount
type ExecutorSubjectType string

// ExecutorSubjectTypeServiceAccount is a service account on the managed cluster.
const ExecutorSubjectTypeServiceAccount ExecutorSubjectType = "ServiceAccount"

// ManifestWorkExecutorSubject is an executor identity.
type ManifestWorkExecutorSubject struct {
	// Type is ServiceAccount.
	// +required
	Type ExecutorSubjectType `json:"type"`

	// ServiceAccount is the service account to act as; required with type ServiceAccount.
	// +optional
	ServiceAccount *ManifestWorkSubjectServiceAccount `json:"serviceAccount,omitempty"`
}

// ManifestWorkSubjectServiceAccount names a service account on the managed cluster.
type ManifestWorkSubjectServiceAccount struct {
	// Namespace of the service account.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	Namespace string `json:"namespace"`

	// Name of the service account.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	Name string `json:"name"`
}
