package federatedlearning

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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

// desiredServerApp is the hub's ServerApp for a SuperLink the federation names:
// `--appio-api-address=<superlink> --plugin-type=serverapp`, with OCM's `--insecure` only when
// the SuperLink is reached without TLS (spec.server.superlinkInsecure); with TLS it trusts the
// system's root certificates, which the ServerApp uses when given neither flag.
func desiredServerApp(fl *flv1alpha1.FederatedLearning, insecure bool) *appsv1.Deployment {
	meta := owned(fl, "serverapp")
	meta.Name = serverAppName(fl)
	args := []string{"--appio-api-address=" + superLinkOrDefault(fl.Spec.Server.SuperLink), "--plugin-type=serverapp"}
	if insecure {
		args = append([]string{"--insecure"}, args...)
	}
	return deployment(meta, "serverapp", fl.Spec.Server.Image, args, nil)
}

// desiredOwnServerApp is the ServerApp of a federation with its own SuperLink: it reaches the
// SuperLink's front through its Service (<name>-superlink.<namespace>:<port>) with TLS, trusting
// the federation's CA, and signs its task requests with the SuperExec secret (both from the
// pods' Secret, podSecretName, and nothing else of it).
func desiredOwnServerApp(fl *flv1alpha1.FederatedLearning, port int32, secret string) *appsv1.Deployment {
	meta := owned(fl, "serverapp")
	meta.Name = serverAppName(fl)
	d := deployment(meta, "serverapp", fl.Spec.Server.Image, []string{
		"--appio-api-address=" + superLinkName(fl) + "." + fl.Namespace + ":" + strconv.Itoa(int(port)),
		"--plugin-type=serverapp",
		"--root-certificates=" + superLinkSecretDir + "/" + keyCA,
		"--superexec-auth-secret-file=" + superLinkSecretDir + "/" + keySuperExec,
	}, nil)
	mountSecret(&d.Spec.Template.Spec, secret, superLinkSecretDir, keyCA, keySuperExec)
	return d
}

// mountSecret mounts keys of Secret name at dir in the pod's one container.
func mountSecret(pod *corev1.PodSpec, name, dir string, keys ...string) {
	items := make([]corev1.KeyToPath, 0, len(keys))
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "flower-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: name, Items: items, DefaultMode: ptr.To[int32](0o440)}}})
	pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "flower-secret", MountPath: dir, ReadOnly: true})
}

// flowerAddOnHosts are the names of flower-addon's SuperLink Service on the hub (the Service
// superlink in flower-system), as a FederatedLearning may write them.
var flowerAddOnHosts = map[string]bool{
	"superlink.flower-system": true, "superlink.flower-system.svc": true, "superlink.flower-system.svc.cluster.local": true,
}

// UsesOwnSuperLink says whether a FederatedLearning's spec.server.superlink gives it a SuperLink of
// its own: it names flower-addon's (the default), which federations no longer share.
func UsesOwnSuperLink(superlink string) bool { return usesFlowerAddOn(superlink) }

// SuperLinkOrDefault is spec.server.superlink, or its default when empty.
func SuperLinkOrDefault(superlink string) string { return superLinkOrDefault(superlink) }

// usesFlowerAddOn says whether a SuperLink address names flower-addon's SuperLink, which the hub
// runs and reaches itself; any other is the federation author's word.
func usesFlowerAddOn(superlink string) bool {
	host, _, _ := strings.Cut(superLinkOrDefault(superlink), ":")
	return flowerAddOnHosts[host]
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
	d := clientAppDeployment(fl, ns, []string{"--insecure", "--appio-api-address=" + supernode, "--plugin-type=clientapp"})
	set := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: owned(fl, "clientapp")}
	set.Name = clientAppName(fl)
	set.Spec.PlacementRefs = []workv1alpha1.LocalPlacementReference{{Name: fl.Name, RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}}}
	set.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{manifest(appsv1.SchemeGroupVersion.WithKind("Deployment"), d)}
	set.Spec.CascadeDeletionPolicy = workv1alpha1.Background
	return set, nil
}

// clientAppDeployment is the ClientApp in namespace ns, with the data path from the ConfigMap
// <name>-data when the federation names a data claim.
func clientAppDeployment(fl *flv1alpha1.FederatedLearning, ns string, args []string) *appsv1.Deployment {
	var env []corev1.EnvVar
	if dataClaim(&fl.Spec) != "" {
		env = []corev1.EnvVar{{Name: DataPathEnv, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: dataConfigMapName(fl)}, Key: DataPathKey,
		}}}}
	}
	return deployment(metav1.ObjectMeta{Name: clientAppName(fl), Namespace: ns, Labels: labels(fl, "clientapp")},
		"clientapp", fl.Spec.Client.Image, args, env)
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

// clientWorkName names the work that carries a client cluster's part of a federation (OpenFL's,
// and a Flower federation's with its own SuperLink): <namespace>.<name>-client, in the cluster's
// namespace on the hub, which no other federation's can be (a namespace has no dot, and names are
// unique in a namespace).
func clientWorkName(fl *flv1alpha1.FederatedLearning) string {
	return fl.Namespace + "." + fl.Name + "-client"
}

// desiredOwnClientWork is what a client cluster runs for a federation with its own SuperLink, all
// in a namespace of the federation's namespace's name on the cluster (so that two tenants'
// federations of one name never share a name there): the namespace (created only when the
// cluster lacks it, and left behind when the work goes, as the OpenFL client's), the data path
// ConfigMap (with a data claim), the SuperNode (Secret with the cluster's own key, Deployment,
// Service) and the ClientApp, which talks to that SuperNode and signs its task requests with the
// SuperExec secret.
func desiredOwnClientWork(fl *flv1alpha1.FederatedLearning, cluster, path string, o SuperLinks, own *ownLink) *workv1.ManifestWork {
	ns := fl.Namespace
	manifests := []workv1.Manifest{manifest(corev1.SchemeGroupVersion.WithKind("Namespace"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})}
	if dataClaim(&fl.Spec) != "" {
		manifests = append(manifests, manifest(corev1.SchemeGroupVersion.WithKind("ConfigMap"), dataConfigMap(fl, ns, path)))
	}
	sec, sn, svc := superNodeObjects(fl, o, ns, cluster, own.Port, own.Material)
	app := clientAppDeployment(fl, ns, []string{"--insecure",
		"--appio-api-address=" + superNodeName(fl) + "." + ns + ":" + strconv.Itoa(int(own.Port)),
		"--plugin-type=clientapp", "--superexec-auth-secret-file=" + superNodeSecretDir + "/" + keySuperExec})
	mountSecret(&app.Spec.Template.Spec, superNodeName(fl), superNodeSecretDir, keySuperExec)
	manifests = append(manifests, manifest(corev1.SchemeGroupVersion.WithKind("Secret"), sec),
		manifest(appsv1.SchemeGroupVersion.WithKind("Deployment"), sn), manifest(corev1.SchemeGroupVersion.WithKind("Service"), svc),
		manifest(appsv1.SchemeGroupVersion.WithKind("Deployment"), app))
	w := clusterWork(fl, clientWorkName(fl), cluster, "client", manifests...)
	keepNamespace(w, ns)
	return w
}

// keepNamespace makes w create namespace ns only where the cluster lacks it, never change it, and
// leave it behind when w goes (with what else it holds).
func keepNamespace(w *workv1.ManifestWork, ns string) {
	id := workv1.ResourceIdentifier{Resource: "namespaces", Name: ns}
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{ResourceIdentifier: id,
		UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly}}}
	w.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
		SelectivelyOrphans: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: id.Resource, Name: id.Name}}}}
}
