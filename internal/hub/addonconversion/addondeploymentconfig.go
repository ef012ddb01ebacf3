package addonconversion

import (
	"fmt"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

// AddOnDeploymentConfigToV1beta1 converts a v1alpha1 AddOnDeploymentConfig to v1beta1: the two
// versions have the same schema.
func AddOnDeploymentConfigToV1beta1(in *v1alpha1.AddOnDeploymentConfig) (*v1beta1.AddOnDeploymentConfig, error) {
	spec, err := recast[v1beta1.AddOnDeploymentConfigSpec](in.Spec)
	if err != nil {
		return nil, fmt.Errorf("converting AddOnDeploymentConfig %s/%s to v1beta1: %w", in.Namespace, in.Name, err)
	}
	out := &v1beta1.AddOnDeploymentConfig{ObjectMeta: *in.ObjectMeta.DeepCopy(), Spec: spec}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), "AddOnDeploymentConfig"
	return out, nil
}

// AddOnDeploymentConfigToV1alpha1 converts a v1beta1 AddOnDeploymentConfig to v1alpha1.
func AddOnDeploymentConfigToV1alpha1(in *v1beta1.AddOnDeploymentConfig) (*v1alpha1.AddOnDeploymentConfig, error) {
	spec, err := recast[v1alpha1.AddOnDeploymentConfigSpec](in.Spec)
	if err != nil {
		return nil, fmt.Errorf("converting AddOnDeploymentConfig %s/%s to v1alpha1: %w", in.Namespace, in.Name, err)
	}
	out := &v1alpha1.AddOnDeploymentConfig{ObjectMeta: *in.ObjectMeta.DeepCopy(), Spec: spec}
	out.APIVersion, out.Kind = v1alpha1.GroupVersion.String(), "AddOnDeploymentConfig"
	return out, nil
}
