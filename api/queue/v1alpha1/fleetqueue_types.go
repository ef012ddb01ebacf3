package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of a FleetQueue.
const (
	// ConditionReady is True when the hub wrote every object of the FleetQueue with the fleet's
	// current quotas.
	ConditionReady = "Ready"
	// ReasonApplied: the objects are written and current.
	ReasonApplied = "Applied"
	// ReasonInvalid: the spec asks for something the fleet cannot give (the message names the
	// field and the fix); nothing was changed.
	ReasonInvalid = "Invalid"
	// ReasonNotOurs: an object of a name the FleetQueue needs exists and was not written by the
	// hub; it is left alone and named.
	ReasonNotOurs = "ObjectNotOwned"
	// ReasonCheckMissing: spec.admissionCheck names no MultiKueue AdmissionCheck, or its
	// MultiKueueConfig does not exist yet.
	ReasonCheckMissing = "AdmissionCheckMissing"
)

// FleetQueue is one queue for the whole fleet: teams sharing the GPUs of a MultiKueue
// AdmissionCheck's workers by weight.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=fq
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Check",type=string,JSONPath=`.spec.admissionCheck`
// +kubebuilder:printcolumn:name="Workers",type=integer,JSONPath=`.status.workers`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type FleetQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the check and the teams.
	// +required
	Spec FleetQueueSpec `json:"spec"`

	// Status is the fleet's quota as written, and whether it could be.
	// +optional
	Status FleetQueueStatus `json:"status,omitempty"`
}

// FleetQueueSpec names the workers and the teams.
type FleetQueueSpec struct {
	// AdmissionCheck is the hub's MultiKueue AdmissionCheck (controllerName
	// kueue.x-k8s.io/multikueue): the quota follows the workers of its MultiKueueConfig, and every
	// team's ClusterQueue requires it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	AdmissionCheck string `json:"admissionCheck"`

	// Teams share the fleet.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Teams []Team `json:"teams"`

	// Reclaim is how a team below its fair share gets GPUs other teams borrowed: Any (the
	// default) preempts the borrowers' workloads at once, whatever their priority, so shares
	// converge within seconds but the preempted work is lost and runs again; LowerPriority
	// preempts only workloads of lower priority; Never preempts nothing, and the shares converge
	// as borrowed work finishes (Kueue's fair sharing still admits the team furthest below its
	// share first). It is the teams' ClusterQueues' spec.preemption.reclaimWithinCohort.
	// +optional
	// +kubebuilder:default=Any
	// +kubebuilder:validation:Enum=Any;LowerPriority;Never
	Reclaim string `json:"reclaim,omitempty"`
}

// Team is one team of a FleetQueue: a ClusterQueue <fleetqueue>-<team> in the cohort
// <fleetqueue>, and a LocalQueue in the team's namespace.
type Team struct {
	// Name names the team's ClusterQueue (<fleetqueue>-<name>).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Namespace is where the team submits: the hub writes the LocalQueue LocalQueue there.
	// MultiKueue needs the same namespace and LocalQueue on every worker.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// LocalQueue is the LocalQueue's name; user-queue (OCM's examples' name) when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	LocalQueue string `json:"localQueue,omitempty"`

	// Weight is the team's fair-sharing weight: under contention, teams' shares of what they
	// borrow go as their weights. Must be above 0.
	// +optional
	// +kubebuilder:default="1"
	Weight resource.Quantity `json:"weight,omitempty"`

	// Guaranteed are GPUs of a model the team always has (its ClusterQueue's nominal quota); the
	// rest of the fleet is shared in the cohort.
	// +optional
	// +listType=map
	// +listMapKey=model
	// +kubebuilder:validation:MaxItems=64
	Guaranteed []GuaranteedGPUs `json:"guaranteed,omitempty"`
}

// GuaranteedGPUs are GPUs of one model set aside for a team.
type GuaranteedGPUs struct {
	// Model is the GPU model (the nodes' nvidia.com/gpu.product label).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Model string `json:"model"`
	// GPUs is how many.
	// +required
	// +kubebuilder:validation:Minimum=1
	GPUs int64 `json:"gpus"`
}

// FleetQueueStatus is what the hub made of a FleetQueue.
type FleetQueueStatus struct {
	// Workers are the MultiKueue workers the quota counts: the check's config's clusters that
	// have usable figures.
	// +optional
	Workers int32 `json:"workers,omitempty"`

	// Models are the fleet's GPUs per model as written into the quotas, by model.
	// +optional
	// +listType=atomic
	Models []ModelQuota `json:"models,omitempty"`

	// Conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ModelQuota is the fleet's quota of one GPU model.
type ModelQuota struct {
	Model string `json:"model"`
	// Flavor is the hub's ResourceFlavor of the model.
	Flavor string `json:"flavor"`
	// GPUs is the allocatable GPUs of the model over the workers.
	GPUs int64 `json:"gpus"`
	// Workers are the workers that have the model.
	Workers []string `json:"workers,omitempty"`
}

// FleetQueueList is a list of FleetQueues.
//
// +kubebuilder:object:root=true
type FleetQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FleetQueue `json:"items"`
}
