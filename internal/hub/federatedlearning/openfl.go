package federatedlearning

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// defaultStorageSize is the claim's request when spec.server.storage.size is empty.
const defaultStorageSize = "2Gi"

// desiredPVC is the claim of spec.server.storage (type PersistentVolumeClaim), owned by the
// FederatedLearning so that it goes with it (the volume follows its reclaim policy).
func desiredPVC(fl *flv1alpha1.FederatedLearning) *corev1.PersistentVolumeClaim {
	size := fl.Spec.Server.Storage.Size
	if size == "" {
		size = defaultStorageSize
	}
	c := &corev1.PersistentVolumeClaim{ObjectMeta: owned(fl, "server")}
	c.Name = fl.Spec.Server.Storage.Name
	c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	return c
}

// desiredService exposes listeners[0] of the server: a NodePort Service takes the listener's
// port as its node port, as OCM's controller does.
func desiredService(fl *flv1alpha1.FederatedLearning) *corev1.Service {
	l := fl.Spec.Server.Listeners[0]
	port := listenerPort(l)
	s := &corev1.Service{ObjectMeta: owned(fl, "server")}
	s.Name = serverName(fl)
	name := l.Name
	if name == "" {
		name = "server"
	}
	sp := corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
	s.Spec.Type = corev1.ServiceTypeLoadBalancer
	if l.Type == flv1alpha1.ListenerTypeNodePort {
		s.Spec.Type, sp.NodePort = corev1.ServiceTypeNodePort, port
	}
	s.Spec.Ports = []corev1.ServicePort{sp}
	s.Spec.Selector = map[string]string{NameLabel: fl.Name, ComponentLabel: "server"}
	return s
}

// Endpoint is where the clients reach the server.
type Endpoint struct {
	Address string
	Port    int32
}

// listenerEndpoint is where listeners[0] can be reached, or "" while it is not known: for a
// NodePort, the listener's ip or else the hub node's InternalIP (nodeIP); for a LoadBalancer,
// the Service's first ingress.
func listenerEndpoint(fl *flv1alpha1.FederatedLearning, svc *corev1.Service, nodeIP string) Endpoint {
	l := fl.Spec.Server.Listeners[0]
	if l.Type == flv1alpha1.ListenerTypeNodePort {
		addr := l.IP
		if addr == "" {
			addr = nodeIP
		}
		return Endpoint{Address: addr, Port: listenerPort(l)}
	}
	if svc == nil {
		return Endpoint{}
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if a := in.IP; a != "" {
			return Endpoint{Address: a, Port: listenerPort(l)}
		}
		if h := in.Hostname; h != "" {
			return Endpoint{Address: h, Port: listenerPort(l)}
		}
	}
	return Endpoint{}
}

// storageVolume mounts the model storage at spec.server.storage.path.
func storageVolume(fl *flv1alpha1.FederatedLearning) (corev1.Volume, corev1.VolumeMount) {
	st := fl.Spec.Server.Storage
	v := corev1.Volume{Name: "model"}
	if st.Type == flv1alpha1.StorageTypeHostPath {
		dir := corev1.HostPathDirectoryOrCreate
		v.HostPath = &corev1.HostPathVolumeSource{Path: st.Path, Type: &dir}
	} else {
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: st.Name}
	}
	return v, corev1.VolumeMount{Name: "model", MountPath: st.Path}
}

// job is a Job of one pod that is not restarted in place (the Job's back-off retries it).
func job(meta metav1.ObjectMeta, container, image string, args []string) *batchv1.Job {
	sel := map[string]string{NameLabel: meta.Labels[NameLabel], ComponentLabel: meta.Labels[ComponentLabel]}
	return &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: sel},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: container, Image: image, Args: args}},
			},
		}},
	}
}

// desiredServerJob is the hub's server: `server --server-ip --server-port --num-rounds --cols
// --model-dir`, the clusters sorted and comma separated, as in OCM.
func desiredServerJob(fl *flv1alpha1.FederatedLearning, ep Endpoint, clusters []string) *batchv1.Job {
	meta := owned(fl, "server")
	meta.Name = serverName(fl)
	s := fl.Spec.Server
	j := job(meta, "server", s.Image, []string{"server",
		"--server-ip=" + ep.Address, "--server-port=" + strconv.Itoa(int(ep.Port)),
		"--num-rounds=" + strconv.Itoa(int(s.Rounds)), "--cols=" + strings.Join(clusters, ","),
		"--model-dir=" + s.Storage.Path,
	})
	v, m := storageVolume(fl)
	j.Spec.Template.Spec.Volumes = []corev1.Volume{v}
	j.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{m}
	return j
}

// desiredClientWork is cluster's ManifestWork <name>: the namespace and the Job <name>-client,
// told the data path that cluster's own claim names.
//
// The namespace is the FederatedLearning's name on the hub, which the cluster may hold already
// with things of its own. So, as the fleet queue's works do, it is created only when missing and
// never changed (CreateOnly: an existing one gets no owner reference of the work's), and it is
// orphaned when the work goes (SelectivelyOrphan): removing the federation, or the cluster
// leaving its decisions, deletes the Job and never the namespace or what it holds.
func desiredClientWork(fl *flv1alpha1.FederatedLearning, cluster, dataPath string, ep Endpoint) *workv1.ManifestWork {
	s := fl.Spec.Server
	meta := metav1.ObjectMeta{Name: clientJobName(fl), Namespace: fl.Namespace, Labels: labels(fl, "client")}
	j := job(meta, "client", fl.Spec.Client.Image, []string{"client",
		"--name=" + cluster, "--data-path=" + dataPath,
		"--server-ip=" + ep.Address, "--server-port=" + strconv.Itoa(int(ep.Port)),
		"--num-rounds=" + strconv.Itoa(int(s.Rounds)), "--model-dir=" + s.Storage.Path,
	})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fl.Namespace}}
	w := clusterWork(fl, clientWorkName(fl), cluster, "client",
		manifest(corev1.SchemeGroupVersion.WithKind("Namespace"), ns),
		manifest(batchv1.SchemeGroupVersion.WithKind("Job"), j))
	keepNamespace(w, fl.Namespace)
	return w
}

// serverJobState reads the server Job: done, and the failure message when it failed.
func serverJobState(j *batchv1.Job) (succeeded, failed bool, message string) {
	if j == nil {
		return false, false, ""
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, false, ""
		case batchv1.JobFailed:
			return false, true, fmt.Sprintf("the server Job %s failed: %s: %s", j.Name, c.Reason, c.Message)
		}
	}
	return false, false, ""
}
