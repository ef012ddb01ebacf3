package flower

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// superNodeLabels select the SuperNode's pods (OCM's).
var superNodeLabels = map[string]string{"app.kubernetes.io/name": "flower-addon", "app.kubernetes.io/component": "supernode"}

// addOnTemplate is the add-on's AddOnTemplate: on each cluster the namespace flower-addon, with
// TLS the ConfigMap flower-ca holding caPEM's certificates (and nothing else of it), and the
// SuperNode's Deployment and Service. The SuperNode's pods carry the CA's hash, so that a new CA
// restarts them.
func addOnTemplate(o Options, caPEM []byte) (*addonv1alpha1.AddOnTemplate, error) {
	tls := !o.Insecure
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: SuperNodeNamespace, Labels: ownerLabels()}}
	c := corev1.Container{
		Name: "supernode", Image: "{{" + VarImage + "}}", Args: SuperNodeArgs(tls),
		Ports:          []corev1.ContainerPort{{Name: "clientappio", ContainerPort: PortClientAppIo, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: tcpProbe(PortClientAppIo, 5), LivenessProbe: tcpProbe(PortClientAppIo, 30),
		SecurityContext: ContainerSecurity(),
	}
	pod := corev1.PodSpec{Containers: []corev1.Container{c}, SecurityContext: PodSecurity(), AutomountServiceAccountToken: ptr.To(false)}
	var annotations map[string]string
	objects := []any{ns}
	if tls {
		cert := certOnly(caPEM)
		if len(cert) == 0 {
			return nil, fmt.Errorf("no CA certificate to give the clusters")
		}
		objects = append(objects, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: SuperNodeNamespace, Name: CAConfigMap, Labels: ownerLabels()},
			Data:       map[string]string{keyCACert: string(cert)}})
		pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "ca", MountPath: superNodeCADir, ReadOnly: true}}
		pod.Volumes = []corev1.Volume{{Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: CAConfigMap}}}}}
		annotations = map[string]string{annotationCA: pemHash(cert)}
	}
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: SuperNodeNamespace, Name: SuperNodeName, Labels: ownerLabels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: superNodeLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: superNodeLabels, Annotations: annotations}, Spec: pod},
		},
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: SuperNodeNamespace, Name: SuperNodeName, Labels: ownerLabels()},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: superNodeLabels, Ports: []corev1.ServicePort{{
			Name: "clientappio", Port: PortClientAppIo, TargetPort: intstr.FromInt32(PortClientAppIo), Protocol: corev1.ProtocolTCP}}},
	}
	objects = append(objects, deploy, svc)
	var manifests []workv1.Manifest
	for _, obj := range objects {
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		manifests = append(manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return &addonv1alpha1.AddOnTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "AddOnTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: builtinaddon.FlowerTemplate, Labels: ownerLabels()},
		Spec: addonv1alpha1.AddOnTemplateSpec{
			AddonName: AddonName,
			AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
		},
	}, nil
}

// deploymentConfig is the add-on's default AddOnDeploymentConfig: OCM's variables from o.
func deploymentConfig(o Options) *addonv1alpha1.AddOnDeploymentConfig {
	o = o.withDefaults()
	host, port := o.hostPort()
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		host = "[" + host + "]" // --superlink=HOST:PORT
	}
	return &addonv1alpha1.AddOnDeploymentConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "AddOnDeploymentConfig"},
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: builtinaddon.FlowerDeploymentConfig, Labels: ownerLabels()},
		// Without it the CRD's default, open-cluster-management-agent-addon, would move the
		// SuperNode out of flower-addon, where FederatedLearning's ClientApps look for it.
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: SuperNodeNamespace, CustomizedVariables: []addonv1alpha1.CustomizedVariable{
			{Name: VarAddress, Value: host},
			{Name: VarPort, Value: strconv.Itoa(port)},
			{Name: VarImage, Value: o.SuperNodeImage},
		}},
	}
}
