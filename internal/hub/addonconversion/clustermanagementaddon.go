package addonconversion

import (
	"fmt"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

// ReservedNoDefaultConfigName is the v1beta1 defaultConfigs name of a v1alpha1 supportedConfigs
// entry without a defaultConfig (OCM's sentinel; not a valid object name, so it names nothing).
const ReservedNoDefaultConfigName = "__reserved_no_default__"

// ClusterManagementAddOnToV1beta1 converts a v1alpha1 ClusterManagementAddOn to v1beta1.
func ClusterManagementAddOnToV1beta1(in *v1alpha1.ClusterManagementAddOn) (*v1beta1.ClusterManagementAddOn, error) {
	var e errs
	a := newAnnotations(in.Annotations)
	out := &v1beta1.ClusterManagementAddOn{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), "ClusterManagementAddOn"

	out.Spec.AddOnMeta = v1beta1.AddOnMeta(in.Spec.AddOnMeta)
	e.keep(park(a, AlphaAddOnConfigurationAnnotation, in.Spec.AddOnConfiguration))
	out.Spec.DefaultConfigs = carryInto(&e, a, BetaDefaultConfigsAnnotation, AlphaSupportedConfigsAnnotation,
		in.Spec.SupportedConfigs, defaultConfigs, supportedConfigs)
	out.Spec.InstallStrategy = recastInto[v1beta1.InstallStrategy](&e, in.Spec.InstallStrategy)
	out.Status.DefaultConfigReferences = recastInto[[]v1beta1.DefaultConfigReference](&e, in.Status.DefaultConfigReferences)
	out.Status.InstallProgressions = recastInto[[]v1beta1.InstallProgression](&e, in.Status.InstallProgressions)

	out.Annotations = a.result()
	if e.err != nil {
		return nil, fmt.Errorf("converting ClusterManagementAddOn %s to v1beta1: %w", in.Name, e.err)
	}
	return out, nil
}

// ClusterManagementAddOnToV1alpha1 converts a v1beta1 ClusterManagementAddOn to v1alpha1.
func ClusterManagementAddOnToV1alpha1(in *v1beta1.ClusterManagementAddOn) (*v1alpha1.ClusterManagementAddOn, error) {
	var e errs
	a := newAnnotations(in.Annotations)
	out := &v1alpha1.ClusterManagementAddOn{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = v1alpha1.GroupVersion.String(), "ClusterManagementAddOn"

	out.Spec.AddOnMeta = v1alpha1.AddOnMeta(in.Spec.AddOnMeta)
	out.Spec.AddOnConfiguration = unpark[v1alpha1.ConfigCoordinates](a, AlphaAddOnConfigurationAnnotation)
	out.Spec.SupportedConfigs = carryInto(&e, a, AlphaSupportedConfigsAnnotation, BetaDefaultConfigsAnnotation,
		in.Spec.DefaultConfigs, supportedConfigs, defaultConfigs)
	out.Spec.InstallStrategy = recastInto[v1alpha1.InstallStrategy](&e, in.Spec.InstallStrategy)
	out.Status.DefaultConfigReferences = recastInto[[]v1alpha1.DefaultConfigReference](&e, in.Status.DefaultConfigReferences)
	out.Status.InstallProgressions = recastInto[[]v1alpha1.InstallProgression](&e, in.Status.InstallProgressions)

	out.Annotations = a.result()
	if e.err != nil {
		return nil, fmt.Errorf("converting ClusterManagementAddOn %s to v1alpha1: %w", in.Name, e.err)
	}
	return out, nil
}

// defaultConfigs is OCM's mapping of supportedConfigs to defaultConfigs.
func defaultConfigs(in []v1alpha1.ConfigMeta) []v1beta1.AddOnConfig {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.AddOnConfig, 0, len(in))
	for _, c := range in {
		ref := v1beta1.ConfigReferent{Name: ReservedNoDefaultConfigName}
		if c.DefaultConfig != nil {
			ref = v1beta1.ConfigReferent(*c.DefaultConfig)
		}
		out = append(out, v1beta1.AddOnConfig{ConfigGroupResource: v1beta1.ConfigGroupResource(c.ConfigGroupResource), ConfigReferent: ref})
	}
	return out
}

// supportedConfigs is OCM's mapping of defaultConfigs to supportedConfigs.
func supportedConfigs(in []v1beta1.AddOnConfig) []v1alpha1.ConfigMeta {
	if in == nil {
		return nil
	}
	out := make([]v1alpha1.ConfigMeta, 0, len(in))
	for _, c := range in {
		m := v1alpha1.ConfigMeta{ConfigGroupResource: v1alpha1.ConfigGroupResource(c.ConfigGroupResource)}
		if c.Name != "" && c.Name != ReservedNoDefaultConfigName {
			m.DefaultConfig = &v1alpha1.ConfigReferent{Namespace: c.Namespace, Name: c.Name}
		}
		out = append(out, m)
	}
	return out
}
