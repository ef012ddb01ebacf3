package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddOnName is the add-on whose agent serves ManagedServiceAccounts on a cluster: a
// ManagedServiceAccount is served on the clusters where ManagedClusterAddOn managed-serviceaccount
// is enabled, as in OCM.
const AddOnName = "managed-serviceaccount"

// Labels OCM's managed-serviceaccount puts on what it makes.
const (
	// LabelIsManagedServiceAccount ("true") marks the ServiceAccount on the cluster and the token
	// Secret on the hub as made for a ManagedServiceAccount. Neither the agent nor the hub
	// touches a ServiceAccount or Secret without it.
	LabelIsManagedServiceAccount = "authentication.open-cluster-management.io/is-managed-serviceaccount"
	// LabelManagedServiceAccountName and LabelManagedServiceAccountNamespace name the
	// ManagedServiceAccount a copied token Secret came from (OCM's ClusterProfile credential
	// syncer).
	LabelManagedServiceAccountName      = "authentication.open-cluster-management.io/managed-serviceaccount-name"
	LabelManagedServiceAccountNamespace = "authentication.open-cluster-management.io/managed-serviceaccount-namespace"
)

// Condition types of a ManagedServiceAccount, OCM's.
const (
	// ConditionTypeSecretCreated is True once the token Secret on the hub is the
	// ManagedServiceAccount's (the hub made it); False when another Secret has its name.
	ConditionTypeSecretCreated = "SecretCreated"
	// ConditionTypeTokenReported is True once the cluster's agent has written a token of the
	// ServiceAccount into the Secret; False with the reason when it cannot.
	ConditionTypeTokenReported = "TokenReported"
)

// DefaultValidity is OCM's default spec.rotation.validity (360 days).
const DefaultValidity = "8640h0m0s"

// ManagedServiceAccount asks for a ServiceAccount on the cluster whose namespace it is in, and
// for a rotated token of it on the hub.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
type ManagedServiceAccount struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ManagedServiceAccountSpec   `json:"spec,omitempty"`
	Status ManagedServiceAccountStatus `json:"status,omitempty"`
}

// ManagedServiceAccountList is a list of ManagedServiceAccounts.
//
// +kubebuilder:object:root=true
type ManagedServiceAccountList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedServiceAccount `json:"items"`
}

// ManagedServiceAccountSpec is what a ManagedServiceAccount asks for.
type ManagedServiceAccountSpec struct {
	// Rotation is the policy for rotation the credentials.
	Rotation ManagedServiceAccountRotation `json:"rotation"`

	// ttlSecondsAfterCreation limits the lifetime of a ManagedServiceAccount.
	// If the ttlSecondsAfterCreation field is set, the ManagedServiceAccount will be
	// automatically deleted regardless of the ManagedServiceAccount's status.
	// When the ManagedServiceAccount is deleted, its lifecycle guarantees
	// (e.g. finalizers) will be honored. If this field is unset, the ManagedServiceAccount
	// won't be automatically deleted. If this field is set to zero, the
	// ManagedServiceAccount becomes eligible for deletion immediately after its creation.
	// In order to use ttlSecondsAfterCreation, the EphemeralIdentity feature gate must be enabled.
	// +optional
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterCreation *int32 `json:"ttlSecondsAfterCreation,omitempty"`
}

// ManagedServiceAccountStatus is what the hub and the cluster's agent report.
type ManagedServiceAccountStatus struct {
	// Conditions is the condition list.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ExpirationTimestamp is the time when the token will expire.
	// +optional
	ExpirationTimestamp *metav1.Time `json:"expirationTimestamp,omitempty"`
	// TokenSecretRef is a reference to the corresponding ServiceAccount's Secret, which stores
	// the CA certficate and token from the managed cluster.
	TokenSecretRef *SecretRef `json:"tokenSecretRef,omitempty"`
}

// ManagedServiceAccountRotation is how the token is rotated.
//
// +kubebuilder:validation:XValidation:rule="!has(self.validity) || duration(self.validity) >= duration('10m')",message="spec.rotation.validity must be at least 10m: Kubernetes issues no ServiceAccount token for less (TokenRequest's minimum); OCM's default is 8640h0m0s"
type ManagedServiceAccountRotation struct {
	// Enabled prescribes whether the ServiceAccount token will be rotated before it expires.
	// Deprecated: All ServiceAccount tokens will be rotated before they expire regardless of this field.
	// +optional
	// +kubebuilder:default=true
	Enabled bool `json:"enabled"`
	// Validity is the duration of validity for requesting the signed ServiceAccount token.
	// +optional
	// +kubebuilder:default="8640h0m0s"
	Validity metav1.Duration `json:"validity"`
}

// SecretRef names the token Secret.
type SecretRef struct {
	// Name is the name of the referenced secret.
	// +required
	Name string `json:"name"`
	// LastRefreshTimestamp is the timestamp indicating when the token in the Secret
	// is refreshed.
	// +required
	LastRefreshTimestamp metav1.Time `json:"lastRefreshTimestamp"`
}
