package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this package's kinds.
var GroupVersion = schema.GroupVersion{Group: "policy.open-cluster-management.io", Version: "v1"}

var (
	// SchemeBuilder registers this package's kinds with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Policy{}, &PolicyList{}, &PlacementBinding{}, &PlacementBindingList{}, &ConfigurationPolicy{}, &ConfigurationPolicyList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
