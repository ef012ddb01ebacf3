package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of a FailoverPolicy, and of a cluster that runs fenced work under no policy.
const (
	DefaultLeaseDurationSeconds = 5
	DefaultFenceAfterSeconds    = 20
	DefaultLostAfterSeconds     = 30
	// ClockSkewSeconds is the clock-skew bound in the rule lostAfterSeconds >=
	// fenceAfterSeconds + leaseDurationSeconds + ClockSkewSeconds.
	ClockSkewSeconds = 5
	// FenceLeases is the rule fenceAfterSeconds >= FenceLeases x leaseDurationSeconds. A healthy
	// agent renews 1 to 1.25 lease periods apart (OCM's jitter) plus the renewal's round trip, so
	// a fence that rises sooner stops the fenced workloads of a cluster that never lost the hub;
	// two periods leave at least three quarters of one for the round trip.
	FenceLeases = 2
)

// FailoverPolicy sets how the clusters of one ManagedClusterSet are fenced and declared lost.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=fop
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Set",type=string,JSONPath=`.spec.clusterSet`
// +kubebuilder:printcolumn:name="Lease",type=integer,JSONPath=`.spec.leaseDurationSeconds`
// +kubebuilder:printcolumn:name="Fence",type=integer,JSONPath=`.spec.fenceAfterSeconds`
// +kubebuilder:printcolumn:name="Lost",type=integer,JSONPath=`.spec.lostAfterSeconds`
type FailoverPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the set and its durations.
	// +required
	Spec FailoverPolicySpec `json:"spec"`

	// Status says which clusters the policy applies to.
	// +optional
	Status FailoverPolicyStatus `json:"status,omitempty"`
}

// FailoverPolicySpec is a cluster set and its durations.
//
// +kubebuilder:validation:XValidation:rule="self.fenceAfterSeconds >= 2 * self.leaseDurationSeconds",message="spec.fenceAfterSeconds must be at least twice spec.leaseDurationSeconds: the agent renews its lease up to 1.25 lease periods apart, so a shorter fence rises between the renewals of a healthy cluster and stops its fenced workloads every cycle: raise fenceAfterSeconds or lower leaseDurationSeconds"
// +kubebuilder:validation:XValidation:rule="self.lostAfterSeconds >= self.fenceAfterSeconds + self.leaseDurationSeconds + 5",message="spec.lostAfterSeconds must be at least spec.fenceAfterSeconds + spec.leaseDurationSeconds + 5 (the clock-skew bound), so that a cluster cut off from the hub has stopped its fenced work before the hub starts it elsewhere: raise lostAfterSeconds or lower fenceAfterSeconds"
type FailoverPolicySpec struct {
	// ClusterSet is the ManagedClusterSet whose clusters the policy applies to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ClusterSet string `json:"clusterSet"`

	// LeaseDurationSeconds is how often the agents of the set's clusters renew their leases. It
	// shortens the ManagedCluster's own spec.leaseDurationSeconds, never lengthens it.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	LeaseDurationSeconds int32 `json:"leaseDurationSeconds,omitempty"`

	// FenceAfterSeconds is how long an agent that cannot renew its lease waits before it stops
	// the cluster's fenced workloads. At least twice leaseDurationSeconds, or it would rise
	// between the renewals of a cluster that never lost the hub.
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	FenceAfterSeconds int32 `json:"fenceAfterSeconds,omitempty"`

	// LostAfterSeconds is how long after the last renewal the hub declares the cluster lost and
	// lets its fenced workloads start elsewhere.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	LostAfterSeconds int32 `json:"lostAfterSeconds,omitempty"`
}

// FailoverPolicyStatus is what the hub made of a policy.
type FailoverPolicyStatus struct {
	// Clusters is how many clusters the policy applies to.
	// +optional
	Clusters int32 `json:"clusters,omitempty"`

	// Conditions: Applied says whether the set exists.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FailoverPolicyList is a list of FailoverPolicies.
//
// +kubebuilder:object:root=true
type FailoverPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FailoverPolicy `json:"items"`
}
