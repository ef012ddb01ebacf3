package addonconversion

import (
	"fmt"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

// ManagedClusterAddOnToV1beta1 converts a v1alpha1 ManagedClusterAddOn to v1beta1.
func ManagedClusterAddOnToV1beta1(in *v1alpha1.ManagedClusterAddOn) (*v1beta1.ManagedClusterAddOn, error) {
	var e errs
	a := newAnnotations(in.Annotations, InstallNamespaceAnnotation)
	out := &v1beta1.ManagedClusterAddOn{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), "ManagedClusterAddOn"

	ns := carryInto(&e, a, BetaInstallNamespaceAnnotation, AlphaInstallNamespaceAnnotation,
		alphaInstallNamespace{InstallNamespace: in.Spec.InstallNamespace, Annotation: annotation(in.Annotations, InstallNamespaceAnnotation)},
		installNamespaceToV1beta1, installNamespaceToV1alpha1)
	if ns != nil {
		a.set(InstallNamespaceAnnotation, *ns)
	}
	out.Spec.Configs = recastInto[[]v1beta1.AddOnConfig](&e, in.Spec.Configs)

	s := &in.Status
	out.Status = v1beta1.ManagedClusterAddOnStatus{
		Conditions:       cloneConditions(s.Conditions),
		RelatedObjects:   recastInto[[]v1beta1.ObjectReference](&e, s.RelatedObjects),
		AddOnMeta:        v1beta1.AddOnMeta(s.AddOnMeta),
		SupportedConfigs: recastInto[[]v1beta1.ConfigGroupResource](&e, s.SupportedConfigs),
		ConfigReferences: carryInto(&e, a, BetaConfigReferencesAnnotation, AlphaConfigReferencesAnnotation,
			s.ConfigReferences, configReferencesToV1beta1, configReferencesToV1alpha1),
		Namespace: s.Namespace,
		Registrations: carryInto(&e, a, BetaRegistrationsAnnotation, AlphaRegistrationsAnnotation,
			alphaRegistrations{Registrations: s.Registrations, KubeClientDriver: s.KubeClientDriver},
			registrationsToV1beta1, registrationsToV1alpha1),
		HealthCheck: v1beta1.HealthCheck{Mode: v1beta1.HealthCheckMode(s.HealthCheck.Mode)},
	}
	e.keep(park(a, AlphaAddOnConfigurationAnnotation, s.AddOnConfiguration))

	out.Annotations = a.result()
	if e.err != nil {
		return nil, fmt.Errorf("converting ManagedClusterAddOn %s/%s to v1beta1: %w", in.Namespace, in.Name, e.err)
	}
	return out, nil
}

// ManagedClusterAddOnToV1alpha1 converts a v1beta1 ManagedClusterAddOn to v1alpha1.
func ManagedClusterAddOnToV1alpha1(in *v1beta1.ManagedClusterAddOn) (*v1alpha1.ManagedClusterAddOn, error) {
	var e errs
	a := newAnnotations(in.Annotations, InstallNamespaceAnnotation)
	out := &v1alpha1.ManagedClusterAddOn{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = v1alpha1.GroupVersion.String(), "ManagedClusterAddOn"

	ns := carryInto(&e, a, AlphaInstallNamespaceAnnotation, BetaInstallNamespaceAnnotation,
		annotation(in.Annotations, InstallNamespaceAnnotation), installNamespaceToV1alpha1, installNamespaceToV1beta1)
	out.Spec.InstallNamespace = ns.InstallNamespace
	if ns.Annotation != nil {
		a.set(InstallNamespaceAnnotation, *ns.Annotation)
	}
	out.Spec.Configs = recastInto[[]v1alpha1.AddOnConfig](&e, in.Spec.Configs)

	s := &in.Status
	regs := carryInto(&e, a, AlphaRegistrationsAnnotation, BetaRegistrationsAnnotation,
		s.Registrations, registrationsToV1alpha1, registrationsToV1beta1)
	out.Status = v1alpha1.ManagedClusterAddOnStatus{
		Conditions:         cloneConditions(s.Conditions),
		RelatedObjects:     recastInto[[]v1alpha1.ObjectReference](&e, s.RelatedObjects),
		AddOnMeta:          v1alpha1.AddOnMeta(s.AddOnMeta),
		AddOnConfiguration: unpark[v1alpha1.ConfigCoordinates](a, AlphaAddOnConfigurationAnnotation),
		SupportedConfigs:   recastInto[[]v1alpha1.ConfigGroupResource](&e, s.SupportedConfigs),
		ConfigReferences: carryInto(&e, a, AlphaConfigReferencesAnnotation, BetaConfigReferencesAnnotation,
			s.ConfigReferences, configReferencesToV1alpha1, configReferencesToV1beta1),
		Namespace:        s.Namespace,
		Registrations:    regs.Registrations,
		HealthCheck:      v1alpha1.HealthCheck{Mode: v1alpha1.HealthCheckMode(s.HealthCheck.Mode)},
		KubeClientDriver: regs.KubeClientDriver,
	}

	out.Annotations = a.result()
	if e.err != nil {
		return nil, fmt.Errorf("converting ManagedClusterAddOn %s/%s to v1alpha1: %w", in.Namespace, in.Name, e.err)
	}
	return out, nil
}

// alphaInstallNamespace is what OCM's install namespace annotation says in v1alpha1:
// spec.installNamespace, and the annotation itself when a v1alpha1 object has one (OCM's own
// conversion leaves it on the v1alpha1 objects it writes).
type alphaInstallNamespace struct {
	InstallNamespace string  `json:"installNamespace,omitempty"`
	Annotation       *string `json:"annotation,omitempty"`
}

// installNamespaceToV1beta1 is OCM's mapping: a v1beta1 object has the annotation when the
// v1alpha1 one has an install namespace.
func installNamespaceToV1beta1(in alphaInstallNamespace) *string {
	if in.InstallNamespace == "" {
		return nil
	}
	return &in.InstallNamespace
}

func installNamespaceToV1alpha1(annotation *string) alphaInstallNamespace {
	if annotation == nil {
		return alphaInstallNamespace{}
	}
	return alphaInstallNamespace{InstallNamespace: *annotation}
}

// annotation is the value of annotation key, nil when there is none.
func annotation(annotations map[string]string, key string) *string {
	v, ok := annotations[key]
	if !ok {
		return nil
	}
	return &v
}

// alphaRegistrations is what v1beta1 registrations say in v1alpha1: the registrations and the
// agent's kubeClient driver, which v1alpha1 keeps beside them.
type alphaRegistrations struct {
	Registrations    []v1alpha1.RegistrationConfig `json:"registrations,omitempty"`
	KubeClientDriver v1alpha1.KubeClientDriver     `json:"kubeClientDriver,omitempty"`
}

// registrationsToV1beta1 is OCM's mapping: the kube-apiserver client signer is a kubeClient
// registration (with the driver; its subject has no organization units), any other signer a
// customSigner one.
func registrationsToV1beta1(in alphaRegistrations) []v1beta1.RegistrationConfig {
	if in.Registrations == nil {
		return nil
	}
	out := make([]v1beta1.RegistrationConfig, 0, len(in.Registrations))
	for _, r := range in.Registrations {
		var sub v1alpha1.Subject
		if r.Subject != nil {
			sub = *r.Subject
		}
		base := v1beta1.BaseSubject{User: sub.User, Groups: sub.Groups}
		if r.SignerName == v1alpha1.KubeAPIServerClientSignerName {
			out = append(out, v1beta1.RegistrationConfig{Type: v1beta1.KubeClient, KubeClient: &v1beta1.KubeClientConfig{
				Subject: v1beta1.KubeClientSubject{BaseSubject: base},
				Driver:  v1beta1.KubeClientDriver(in.KubeClientDriver),
			}})
			continue
		}
		out = append(out, v1beta1.RegistrationConfig{Type: v1beta1.CustomSigner, CustomSigner: &v1beta1.CustomSignerConfig{
			SignerName: r.SignerName,
			Subject:    v1beta1.Subject{BaseSubject: base, OrganizationUnits: sub.OrganizationUnits},
		}})
	}
	return out
}

// registrationsToV1alpha1 is OCM's mapping back: the driver is the first kubeClient
// registration's. An empty subject is no subject.
func registrationsToV1alpha1(in []v1beta1.RegistrationConfig) alphaRegistrations {
	var out alphaRegistrations
	if in == nil {
		return out
	}
	out.Registrations = make([]v1alpha1.RegistrationConfig, 0, len(in))
	for _, r := range in {
		var reg v1alpha1.RegistrationConfig
		var sub v1alpha1.Subject
		switch {
		case r.Type == v1beta1.KubeClient:
			reg.SignerName = v1alpha1.KubeAPIServerClientSignerName
			if r.KubeClient != nil {
				sub = v1alpha1.Subject{User: r.KubeClient.Subject.User, Groups: r.KubeClient.Subject.Groups}
				if out.KubeClientDriver == "" {
					out.KubeClientDriver = v1alpha1.KubeClientDriver(r.KubeClient.Driver)
				}
			}
		case r.CustomSigner != nil:
			reg.SignerName = r.CustomSigner.SignerName
			s := r.CustomSigner.Subject
			sub = v1alpha1.Subject{User: s.User, Groups: s.Groups, OrganizationUnits: s.OrganizationUnits}
		}
		if sub.User != "" || len(sub.Groups) > 0 || len(sub.OrganizationUnits) > 0 {
			reg.Subject = &sub
		}
		out.Registrations = append(out.Registrations, reg)
	}
	return out
}

// configReferencesToV1beta1 is OCM's mapping: name and namespace go (desiredConfig says them),
// and a reference without desiredConfig gets one of its name and namespace.
func configReferencesToV1beta1(in []v1alpha1.ConfigReference) []v1beta1.ConfigReference {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.ConfigReference, 0, len(in))
	for _, r := range in {
		ref := v1beta1.ConfigReference{
			ConfigGroupResource:    v1beta1.ConfigGroupResource(r.ConfigGroupResource),
			LastObservedGeneration: r.LastObservedGeneration,
			DesiredConfig:          specHashToV1beta1(r.DesiredConfig),
			LastAppliedConfig:      specHashToV1beta1(r.LastAppliedConfig),
		}
		if ref.DesiredConfig == nil && (r.Name != "" || r.Namespace != "") {
			ref.DesiredConfig = &v1beta1.ConfigSpecHash{ConfigReferent: v1beta1.ConfigReferent(r.ConfigReferent)}
		}
		out = append(out, ref)
	}
	return out
}

// configReferencesToV1alpha1 is OCM's mapping back: name and namespace are desiredConfig's.
func configReferencesToV1alpha1(in []v1beta1.ConfigReference) []v1alpha1.ConfigReference {
	if in == nil {
		return nil
	}
	out := make([]v1alpha1.ConfigReference, 0, len(in))
	for _, r := range in {
		ref := v1alpha1.ConfigReference{
			ConfigGroupResource:    v1alpha1.ConfigGroupResource(r.ConfigGroupResource),
			LastObservedGeneration: r.LastObservedGeneration,
			DesiredConfig:          specHashToV1alpha1(r.DesiredConfig),
			LastAppliedConfig:      specHashToV1alpha1(r.LastAppliedConfig),
		}
		if r.DesiredConfig != nil {
			ref.ConfigReferent = v1alpha1.ConfigReferent(r.DesiredConfig.ConfigReferent)
		}
		out = append(out, ref)
	}
	return out
}

func specHashToV1beta1(in *v1alpha1.ConfigSpecHash) *v1beta1.ConfigSpecHash {
	if in == nil {
		return nil
	}
	return &v1beta1.ConfigSpecHash{ConfigReferent: v1beta1.ConfigReferent(in.ConfigReferent), SpecHash: in.SpecHash}
}

func specHashToV1alpha1(in *v1beta1.ConfigSpecHash) *v1alpha1.ConfigSpecHash {
	if in == nil {
		return nil
	}
	return &v1alpha1.ConfigSpecHash{ConfigReferent: v1alpha1.ConfigReferent(in.ConfigReferent), SpecHash: in.SpecHash}
}
