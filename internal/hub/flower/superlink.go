package flower

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// flowerUID is the user of Flower's images (app, 49999): runAsNonRoot needs it numeric.
const flowerUID = 49999

// Annotations on pod templates whose change restarts the pods.
const (
	annotationServingCert = "flower.flotilla.io/serving-cert"
	annotationCA          = "flower.flotilla.io/ca"
)

// superLinkLabels select the SuperLink's pods.
var superLinkLabels = map[string]string{"app.kubernetes.io/name": "flower-addon", "app.kubernetes.io/component": "superlink"}

// superLinkDeployment is the SuperLink's Deployment on the hub. servingHash is pemHash of the
// serving certificate ("" without TLS): a new one restarts the SuperLink.
func superLinkDeployment(o Options, servingHash string) *appsv1.Deployment {
	o = o.withDefaults()
	tls := !o.Insecure
	c := corev1.Container{
		Name: "superlink", Image: o.SuperLinkImage, Args: SuperLinkArgs(tls),
		// Flower 1.42 serves the Fleet, Control and ServerAppIo (Runtime) APIs on one port.
		Ports:           []corev1.ContainerPort{{Name: "superlink", ContainerPort: PortFleet, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe:  tcpProbe(PortFleet, 5),
		LivenessProbe:   tcpProbe(PortFleet, 30),
		SecurityContext: ContainerSecurity(),
	}
	pod := corev1.PodSpec{Containers: []corev1.Container{c}, SecurityContext: PodSecurity(), AutomountServiceAccountToken: ptr.To(false)}
	annotations := map[string]string(nil)
	if tls {
		pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "tls", MountPath: superLinkTLSDir, ReadOnly: true}}
		pod.Volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: ServingSecret, DefaultMode: ptr.To[int32](0o440)}}}}
		annotations = map[string]string{annotationServingCert: servingHash}
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: SuperLinkName, Labels: ownerLabels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			// One SuperLink holds the federation's state in memory: never two at once.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: superLinkLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: superLinkLabels, Annotations: annotations}, Spec: pod},
		},
	}
}

// superLinkService is the SuperLink's Service on the hub: OCM's three ports (ServerAppIo, Fleet
// and Control), which Flower 1.42 all serves on its one port, so that OCM's addresses
// (superlink.flower-system:9091 in a FederatedLearning, :9092 for SuperNodes, :9093 for flwr)
// still reach it.
func superLinkService() *corev1.Service {
	port := func(name string, p int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: p, TargetPort: intstr.FromInt32(PortFleet), Protocol: corev1.ProtocolTCP}
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: SuperLinkName, Labels: ownerLabels()},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: superLinkLabels,
			Ports: []corev1.ServicePort{port("appio", PortServerAppIo), port("fleet", PortFleet), port("control", PortControl)},
		},
	}
}

// hubCAConfigMap holds the CA certificate on the hub, for Flower clients there (`flwr` and
// ServerApps reaching the Control API).
func hubCAConfigMap(caPEM []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: CAConfigMap, Labels: ownerLabels()},
		Data:       map[string]string{keyCACert: string(certOnly(caPEM))},
	}
}

func tcpProbe(port int32, delay int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}},
		InitialDelaySeconds: delay, PeriodSeconds: 10,
	}
}

// PodSecurity and ContainerSecurity meet the restricted Pod Security Standard as Flower's images
// run (user app, 49999): flower-addon's pods and federations' own SuperLinks and SuperNodes.
func PodSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](flowerUID), RunAsGroup: ptr.To[int64](flowerUID), FSGroup: ptr.To[int64](flowerUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func ContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}
