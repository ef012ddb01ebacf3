package federatedlearning

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
)

// deployment is a one-replica Deployment running image with args, as OCM's controller writes
// the ServerApp and the ClientApp.
func deployment(meta metav1.ObjectMeta, container, image string, args []string, env []corev1.EnvVar) *appsv1.Deployment {
	one := int32(1)
	sel := map[string]string{NameLabel: meta.Labels[NameLabel], ComponentLabel: meta.Labels[ComponentLabel]}
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: container, Image: image, Args: args, Env: env,
				}}},
			},
		},
	}
}

// serverCAPath is where the ServerApp finds the SuperLink's CA certificate.
const serverCADir = "/etc/flower/superlink-ca"

// desiredServerApp is the hub's ServerApp: `--appio-api-address=<superlink>
// --plugin-type=serverapp` with OCM's `--insecure` only when the SuperLink is reached without
// TLS (insecure: flower-addon's with the hub's --flower-tls=false, or another with
// spec.server.superlinkInsecure). With flower-addon's TLS SuperLink (caPEM set) it gets
// --root-certificates with the CA from ConfigMap <name>-superlink-ca: Flower 1.42 serves the
// ServerAppIo (Runtime) API on the SuperLink's TLS port, where an --insecure ServerApp never
// connects. Another SuperLink with TLS is trusted through the system's root certificates, which
// the ServerApp uses when given neither flag.
func desiredServerApp(fl *flv1alpha1.FederatedLearning, caPEM string, insecure bool) (*appsv1.Deployment, *corev1.ConfigMap) {
	meta := owned(fl, "serverapp")
	meta.Name = serverAppName(fl)
	appio := []string{"--appio-api-address=" + superLinkOrDefault(fl.Spec.Server.SuperLink), "--plugin-type=serverapp"}
	if insecure {
		return deployment(meta, "serverapp", fl.Spec.Server.Image, append([]string{"--insecure"}, appio...), nil), nil
	}
	if caPEM == "" {
		return deployment(meta, "serverapp", fl.Spec.Server.Image, appio, nil), nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: owned(fl, "serverapp"), Data: map[string]string{"ca.crt": caPEM}}
	cm.Name = caConfigMapName(fl)
	d := deployment(meta, "serverapp", fl.Spec.Server.Image, append([]string{"--root-certificates=" + serverCADir + "/ca.crt"}, appio...), nil)
	pod := &d.Spec.Template.Spec
	pod.Volumes = []corev1.Volume{{Name: "superlink-ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}
	pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "superlink-ca", MountPath: serverCADir, ReadOnly: true}}
	return d, cm
}

// flowerAddOnHosts are the names of flower-addon's SuperLink Service on the hub (the Service
// superlink in flower-system), as a FederatedLearning may write them.
var flowerAddOnHosts = map[string]bool{
	"superlink.flower-system": true, "superlink.flower-system.svc": true, "superlink.flower-system.svc.cluster.local": true,
}

// usesFlowerAddOn says whether a SuperLink address names flower-addon's SuperLink, which the hub
// runs and reaches itself; any other is the federation author's word.
func usesFlowerAddOn(superlink string) bool {
	host, _, _ := strings.Cut(superLinkOrDefault(superlink), ":")
	return flowerAddOnHosts[host]
}

// superLinkInsecure says whether fl's SuperLink is reached without TLS: flower-addon's when the
// hub runs it so (flowerTLS false), another only when spec.server.superlinkInsecure says so.
func superLinkInsecure(fl *flv1alpha1.FederatedLearning, flowerTLS bool) bool {
	if usesFlowerAddOn(fl.Spec.Server.SuperLink) {
		return !flowerTLS
	}
	return fl.Spec.Server.SuperLinkInsecure
}

// desiredClientApp is the ManifestWorkReplicaSet <name>-clientapp over the placement: a
// Deployment <name>-clientapp in the SuperNode's namespace on each cluster. With a data claim,
// the ClientApp reads its data path from the ConfigMap that only its own cluster gets
// (desiredDataWork); the reference is not optional, so a client never starts without it.
func desiredClientApp(fl *flv1alpha1.FederatedLearning) (*workv1alpha1.ManifestWorkReplicaSet, error) {
	supernode := superNodeOrDefault(fl.Spec.Client.SuperNode)
	ns, err := supernodeNamespace(supernode)
	if err != nil {
		return nil, err
	}
	var env []corev1.EnvVar
	if dataClaim(&fl.Spec) != "" {
		env = []corev1.EnvVar{{Name: DataPathEnv, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: dataConfigMapName(fl)}, Key: DataPathKey,
		}}}}
	}
	d := deployment(metav1.ObjectMeta{Name: clientAppName(fl), Namespace: ns, Labels: labels(fl, "clientapp")},
		"clientapp", fl.Spec.Client.Image,
		[]string{"--insecure", "--appio-api-address=" + supernode, "--plugin-type=clientapp"}, env)
	set := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: owned(fl, "clientapp")}
	set.Name = clientAppName(fl)
	set.Spec.PlacementRefs = []workv1alpha1.LocalPlacementReference{{Name: fl.Name, RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}}}
	set.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{manifest(appsv1.SchemeGroupVersion.WithKind("Deployment"), d)}
	set.Spec.CascadeDeletionPolicy = workv1alpha1.Background
	return set, nil
}

// desiredDataWork delivers a client cluster's data path to that cluster only.
func desiredDataWork(fl *flv1alpha1.FederatedLearning, cluster, path string) (*workv1.ManifestWork, error) {
	ns, err := supernodeNamespace(superNodeOrDefault(fl.Spec.Client.SuperNode))
	if err != nil {
		return nil, err
	}
	return clusterWork(fl, dataWorkName(fl), cluster, "client",
		manifest(corev1.SchemeGroupVersion.WithKind("ConfigMap"), dataConfigMap(fl, ns, path))), nil
}
