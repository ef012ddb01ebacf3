package v1

// ManifestWorkExecutor is the identity the work agent applies a workload as. The agent checks
// that this identity may write every object before applying it, so a ManifestWork cannot do on
// the managed cluster more than its executor could.
type ManifestWorkExecutor struct {
	// Subject is the identity, for example a service account on the managed cluster.
	// +optional
	Subject *ManifestWorkExecutorSubject `json:"subject,omitempty"`
}

// ManifestWorkExecutorSubjectType is the kind of identity an executor is.
// +kubebuilder:validation:Enum=ServiceAccount
type ManifestWorkExecutorSubjectType string

// ExecutorSubjectTypeServiceAccount is a service account on the managed cluster, named in
// subject.serviceAccount; the agent impersonates it.
const ExecutorSubjectTypeServiceAccount ManifestWorkExecutorSubjectType = "ServiceAccount"

// ManifestWorkExecutorSubject is an identity on the managed cluster.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'ServiceAccount' || has(self.serviceAccount)",message="executor.subject of type ServiceAccount needs serviceAccount: give the namespace and name of the service account to apply as"
type ManifestWorkExecutorSubject struct {
	// Type is the kind of identity; ServiceAccount is the only one.
	// +required
	Type ManifestWorkExecutorSubjectType `json:"type"`

	// ServiceAccount names the service account to apply as, with type ServiceAccount.
	// +optional
	ServiceAccount *ManifestWorkSubjectServiceAccount `json:"serviceAccount,omitempty"`
}

// ManifestWorkSubjectServiceAccount names a service account on the managed cluster.
type ManifestWorkSubjectServiceAccount struct {
	// Namespace is the service account's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	Namespace string `json:"namespace"`

	// Name is the service account's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	Name string `json:"name"`
}
