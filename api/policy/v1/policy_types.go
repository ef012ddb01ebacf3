package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

// Labels and annotations of a replicated policy, OCM's names.
const (
	// RootPolicyLabel names the replicated policy's root, <root namespace>.<root name>.
	RootPolicyLabel = "policy.open-cluster-management.io/root-policy"
	// ClusterNameLabel and ClusterNamespaceLabel name the cluster the replicated policy is for.
	ClusterNameLabel      = "policy.open-cluster-management.io/cluster-name"
	ClusterNamespaceLabel = "policy.open-cluster-management.io/cluster-namespace"
	// ArgoCDCompareOptionsAnnotation is set to IgnoreExtraneous on every replicated policy, so
	// that Argo CD, which syncs the root, does not prune the copies.
	ArgoCDCompareOptionsAnnotation = "argocd.argoproj.io/compare-options"
	// RootPolicyUIDAnnotation is Flotilla's: the UID of the root policy the hub replicated this one
	// from. A policy in a cluster's namespace is the hub's to update or delete only when it
	// carries its root's UID; anyone may copy the labels.
	RootPolicyUIDAnnotation = "policy.flotilla.io/root-policy-uid"
)

// MaxReplicatedNameLength bounds <namespace>.<name>: the replicated policy's name is also the
// value of RootPolicyLabel, and label values hold 63 characters.
const MaxReplicatedNameLength = 63

// Kind and PolicySetKind are the kinds a PlacementBinding may bind.
const (
	Kind          = "Policy"
	PolicySetKind = "PolicySet"
)

// RemediationAction says whether a policy only reports (inform) or also puts right (enforce)
// what it finds; OCM accepts either case.
//
// +kubebuilder:validation:Enum=Inform;inform;Enforce;enforce
type RemediationAction string

const (
	Enforce RemediationAction = "Enforce"
	Inform  RemediationAction = "Inform"
)

// ComplianceState is a policy's or a cluster's compliance.
//
// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant
type ComplianceState string

const (
	Compliant    ComplianceState = "Compliant"
	NonCompliant ComplianceState = "NonCompliant"
	// Pending: a dependency is not yet in the state the policy waits for.
	Pending ComplianceState = "Pending"
)

// Policy wraps policy engine objects (spec.policy-templates) that the hub delivers to the clusters
// its PlacementBindings' Placements select, and reports their compliance per cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=policies,scope=Namespaced,shortName=plc
// +kubebuilder:printcolumn:name="Remediation action",type="string",JSONPath=".spec.remediationAction"
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	// +required
	Spec PolicySpec `json:"spec"`
	// +optional
	Status PolicyStatus `json:"status,omitempty"`
}

// PolicySpec is what the policy delivers and how.
type PolicySpec struct {
	// Disabled removes the policy from every cluster while it is true.
	// +required
	Disabled bool `json:"disabled"`

	// CopyPolicyMetadata copies the root's labels and annotations to the replicated policies
	// (default true); false copies only those of policy.open-cluster-management.io.
	// +optional
	CopyPolicyMetadata *bool `json:"copyPolicyMetadata,omitempty"`

	// RemediationAction, when set, overrides the remediationAction of every template.
	// +optional
	RemediationAction RemediationAction `json:"remediationAction,omitempty"`

	// PolicyTemplates are the policy engine objects the clusters evaluate.
	// +required
	PolicyTemplates []*PolicyTemplate `json:"policy-templates"` //nolint:tagliatelle // OCM's field name

	// Dependencies must be in their compliance state before the policy's templates are applied.
	// +optional
	Dependencies []PolicyDependency `json:"dependencies,omitempty"`

	// HubTemplateOptions changes how {{hub ... hub}} templates are resolved.
	// +optional
	HubTemplateOptions *HubTemplateOptions `json:"hubTemplateOptions,omitempty"`

	// RolloutStrategy rolls an enforce policy out cluster by cluster or group by group, as
	// OCM's rollout strategy does for ManifestWorkReplicaSets (Flotilla's extension, after OCM's
	// policy placement strategy proposal): every placed cluster gets the policy at once as
	// inform, and the hub turns it to enforce on the clusters the strategy lets through, moving on
	// as they report Compliant. Unset or All: every cluster at once.
	// +optional
	RolloutStrategy *clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitempty"`
}

// PolicyTemplate is one policy engine object and how it takes part in the policy.
type PolicyTemplate struct {
	// ObjectDefinition is the object evaluated on the cluster, ConfigurationPolicy for example.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	ObjectDefinition runtime.RawExtension `json:"objectDefinition"`

	// ExtraDependencies apply to this template only.
	// +optional
	ExtraDependencies []PolicyDependency `json:"extraDependencies,omitempty"`

	// IgnorePending leaves this template's Pending out of the policy's compliance.
	// +optional
	IgnorePending bool `json:"ignorePending,omitempty"`
}

// PolicyDependency is an object (its .status.compliant) that must be in Compliance first.
type PolicyDependency struct {
	metav1.TypeMeta `json:",inline"`

	// Name is the object's name.
	// +required
	Name string `json:"name"`
	// Namespace is the object's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Compliance is the state the object must be in.
	// +required
	Compliance ComplianceState `json:"compliance"`
}

// HubTemplateOptions changes how hub templates are resolved.
type HubTemplateOptions struct {
	// ServiceAccountName is a ServiceAccount in the policy's namespace whose rights hub template
	// lookups use.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// PolicyStatus is a root policy's (placement, status, compliant) or a replicated policy's
// (compliant, details) observed state.
type PolicyStatus struct {
	// Placement lists the bindings that place the root policy, with their decisions.
	// +optional
	Placement []*Placement `json:"placement,omitempty"`
	// Status is each placed cluster's compliance (root policy).
	// +optional
	Status []*CompliancePerClusterStatus `json:"status,omitempty"`
	// ComplianceState is the policy's compliance: the worst of its clusters' (root) or of its
	// templates' (replicated).
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// Details is each template's compliance with its recent messages (replicated policy).
	// +optional
	Details []*DetailsPerTemplate `json:"details,omitempty"`
}

// PlacementDecision is one cluster a binding's placement decided.
type PlacementDecision struct {
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// +optional
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
}

// PolicyExclusion is a cluster a PolicySet's exclusions keep the policy from.
type PolicyExclusion struct {
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
}

// Placement is a binding that places the policy (directly, or through PolicySet).
type Placement struct {
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
	// PlacementRule is OCM's deprecated placement kind, which Flotilla does not serve.
	// +optional
	PlacementRule string `json:"placementRule,omitempty"`
	// +optional
	Placement string `json:"placement,omitempty"`
	// +optional
	Decisions []PlacementDecision `json:"decisions,omitempty"`
	// +optional
	PolicySet string `json:"policySet,omitempty"`
	// +optional
	Exclusions []PolicyExclusion `json:"exclusions,omitempty"`
}

// RemainingBinding is a binding that still places the policy on a cluster a PolicySet excludes.
type RemainingBinding struct {
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
}

// CompliancePerClusterStatus is one cluster's compliance with the root policy.
type CompliancePerClusterStatus struct {
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// +optional
	ClusterName string `json:"clustername,omitempty"`
	// +optional
	ClusterNamespace string `json:"clusternamespace,omitempty"`
	// +optional
	RemainingBindings []RemainingBinding `json:"remainingBindings,omitempty"`
}

// DetailsPerTemplate is one template's compliance on the cluster, with its recent messages.
type DetailsPerTemplate struct {
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	TemplateMeta metav1.ObjectMeta `json:"templateMeta,omitempty"`
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// History holds the latest messages first (OCM keeps 10).
	// +optional
	History []ComplianceHistory `json:"history,omitempty"`
	// RelatedObjects are, while the template is not Compliant, the objects it found not as
	// specified or missing, each with its differences field by field when recorded (Flotilla's
	// extension, at most 20; `flotilla explain policy` shows them).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	RelatedObjects []RelatedObject `json:"relatedObjects,omitempty"`
}

// ComplianceHistory is one compliance message.
type ComplianceHistory struct {
	// +optional
	LastTimestamp metav1.Time `json:"lastTimestamp,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	EventName string `json:"eventName,omitempty"`
}

// PolicyList is a list of Policies.
//
// +kubebuilder:object:root=true
type PolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Policy `json:"items"`
}

// ReplicatedName is the name of root's copy in a cluster's namespace, <namespace>.<name>.
func ReplicatedName(namespace, name string) string { return namespace + "." + name }

// RootSelector selects root policies: the copies carry RootPolicyLabel.
func RootSelector() labels.Selector {
	r, _ := labels.NewRequirement(RootPolicyLabel, selection.DoesNotExist, nil)
	return labels.NewSelector().Add(*r)
}

// IsReplicated reports whether p is a replicated policy (it names its root).
func (p *Policy) IsReplicated() bool {
	_, ok := p.Labels[RootPolicyLabel]
	return ok
}
