package addontemplate

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// decorate changes one rendered object as OCM's template agent does: a Deployment's or
// DaemonSet's pod template gets the preset variables as environment variables, the volumes of
// the agent's credentials, the AddOnDeploymentConfig's nodePlacement and image registries; and
// with the config's agentInstallNamespace every namespaced object moves there (a Namespace is
// renamed to it, the service account subjects of role bindings follow).
func decorate(obj *unstructured.Unstructured, in Input, vars variables) (*unstructured.Unstructured, error) {
	if ns := configNamespace(in.Config); ns != "" {
		moveToNamespace(obj, ns)
	}
	if _, ok := workload(obj); !ok {
		return obj, nil
	}
	var typed runtime.Object = &appsv1.Deployment{}
	if obj.GetKind() == "DaemonSet" {
		typed = &appsv1.DaemonSet{}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, fmt.Errorf("reading the %s: %w", obj.GetKind(), err)
	}
	var pod *corev1.PodTemplateSpec
	switch w := typed.(type) {
	case *appsv1.Deployment:
		pod = &w.Spec.Template
	case *appsv1.DaemonSet:
		pod = &w.Spec.Template
	}
	addEnv(pod, vars)
	if err := addCredentialVolumes(pod, in); err != nil {
		return nil, err
	}
	if in.Config != nil {
		placeNodes(pod, in.Config.Spec.NodePlacement)
		for i := range pod.Spec.Containers {
			pod.Spec.Containers[i].Image = OverrideImage(in.Config.Spec.Registries, pod.Spec.Containers[i].Image)
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, err
	}
	// The typed round trip adds an empty status and a null creation time: the template had neither.
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
		delete(md, "creationTimestamp")
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// addEnv appends the preset variables to every container's environment, in OCM's order.
func addEnv(pod *corev1.PodTemplateSpec, vars variables) {
	for i := range pod.Spec.Containers {
		for _, name := range vars.preset {
			pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, corev1.EnvVar{Name: name, Value: vars.values[name]})
		}
	}
}

// addCredentialVolumes mounts the Secrets the spoke's agent writes for each registration into
// every container, with OCM's names and paths: the hub kubeconfig (<addon>-hub-kubeconfig at
// /managed/hub-kubeconfig) and each custom signer's certificate
// (<addon>-<signer>-client-cert at /managed/<signer>).
func addCredentialVolumes(pod *corev1.PodTemplateSpec, in Input) error {
	var mounts []corev1.VolumeMount
	var volumes []corev1.Volume
	add := func(name, path, secret string) {
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path})
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
	}
	kubeClient := false
	for i, r := range in.Template.Spec.Registration {
		switch r.Type {
		case addonv1alpha1.RegistrationTypeKubeClient:
			if !kubeClient {
				add("hub-kubeconfig", hubKubeconfigMountPath, in.Addon+"-hub-kubeconfig")
				kubeClient = true
			}
		case addonv1alpha1.RegistrationTypeCustomSigner:
			if r.CustomSigner == nil {
				return fmt.Errorf("spec.registration[%d].customSigner is required with type CustomSigner", i)
			}
			signer := strings.ReplaceAll(r.CustomSigner.SignerName, "/", "-")
			add("cert-"+strings.ReplaceAll(signer, ".", "-"), "/managed/"+signer, CustomSignerSecretName(in.Addon, r.CustomSigner.SignerName))
		}
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts, mounts...)
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, volumes...)
	return nil
}

// CustomSignerSecretName is the Secret on the spoke holding an add-on's certificate from a
// custom signer (OCM's name).
func CustomSignerSecretName(addon, signer string) string {
	return addon + "-" + strings.ReplaceAll(signer, "/", "-") + "-client-cert"
}

// placeNodes applies nodePlacement: a node selector or tolerations that are set replace the
// template's. (OCM replaces the tolerations only when a node selector is set too.)
func placeNodes(pod *corev1.PodTemplateSpec, np *addonv1alpha1.NodePlacement) {
	if np == nil {
		return
	}
	if np.NodeSelector != nil {
		pod.Spec.NodeSelector = np.NodeSelector
	}
	if np.Tolerations != nil {
		pod.Spec.Tolerations = np.Tolerations
	}
}

// OverrideImage is image pulled from the registries' mirrors, as OCM's addon framework does:
// a mirror with a source replaces that prefix of the image; one without a source puts the
// image's last path segment under the mirror. The last mirror that changes the image wins.
func OverrideImage(registries []addonv1alpha1.ImageMirror, image string) string {
	out := image
	for _, r := range registries {
		if name := overrideImage(r.Source, r.Mirror, image); name != image {
			out = name
		}
	}
	return out
}

func overrideImage(source, mirror, image string) string {
	source, mirror = strings.TrimSuffix(source, "/"), strings.TrimSuffix(mirror, "/")
	if source == "" {
		last := image[strings.LastIndex(image, "/")+1:]
		if mirror == "" {
			return last
		}
		return mirror + "/" + last
	}
	if !strings.HasPrefix(image, source) {
		return image
	}
	return mirror + strings.TrimPrefix(image, source)
}

// moveToNamespace puts a namespaced object into ns, as OCM's namespace decorator does: objects
// with a namespace move, a Namespace is renamed, and the service account subjects of
// RoleBindings and ClusterRoleBindings follow.
func moveToNamespace(obj *unstructured.Unstructured, ns string) {
	if obj.GetNamespace() != "" {
		obj.SetNamespace(ns)
	}
	switch obj.GetKind() {
	case "Namespace":
		obj.SetName(ns)
	case "RoleBinding", "ClusterRoleBinding":
		subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
		for _, s := range subjects {
			if m, ok := s.(map[string]any); ok && m["kind"] == "ServiceAccount" {
				m["namespace"] = ns
			}
		}
		if subjects != nil {
			_ = unstructured.SetNestedSlice(obj.Object, subjects, "subjects")
		}
	}
}
