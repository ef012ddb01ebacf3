package apitest

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

func TestObjIsACopy(t *testing.T) {
	w := MakeCluster("a").Label("team", "x").Claim("id.k8s.io", "1")
	first := w.Obj()
	first.Labels["team"] = "changed"
	first.Status.ClusterClaims[0].Value = "changed"
	w.Accepted()
	want := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "x"}},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		Status:     clusterv1.ManagedClusterStatus{ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: "1"}}},
	}
	if got := w.Obj(); !reflect.DeepEqual(want, got) {
		t.Errorf("second Obj:\n got %+v\nwant %+v", got, want)
	}
}

func TestGPUClaim(t *testing.T) {
	got := MakeCluster("a").GPUClaim("NVIDIA-L4", "8").GPUClaim("NVIDIA-A100", "16").Obj().Status.ClusterClaims
	want := []clusterv1.ManagedClusterClaim{
		{Name: clusterv1.GPUModelsClaim, Value: "NVIDIA-L4,NVIDIA-A100"},
		{Name: clusterv1.GPUCountClaimName("NVIDIA-L4"), Value: "8"},
		{Name: clusterv1.GPUCountClaimName("NVIDIA-A100"), Value: "16"},
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("claims:\n got %+v\nwant %+v", got, want)
	}
}

func TestClusterSetAndDeleting(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got := MakeCluster("a").ClusterSet("blue").Finalizer("test").Deleting(at).Obj()
	if got.Labels[clusterv1beta2.ClusterSetLabel] != "blue" || got.DeletionTimestamp == nil || !got.DeletionTimestamp.Time.Equal(at) ||
		!reflect.DeepEqual(got.Finalizers, []string{"test"}) {
		t.Errorf("got labels %v, deletion %v, finalizers %v", got.Labels, got.DeletionTimestamp, got.Finalizers)
	}
}

func TestWorkObject(t *testing.T) {
	got := MakeWork("c", "w").Object("v1", "ConfigMap", "default", "a").Object("v1", "Namespace", "", "ml").Obj().Spec.Workload.Manifests
	want := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"}}`,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`,
	}
	var raws []string
	for _, m := range got {
		raws = append(raws, string(m.Raw))
	}
	if !reflect.DeepEqual(want, raws) {
		t.Errorf("manifests:\n got %q\nwant %q", raws, want)
	}
}

func TestFederatedLearningProgress(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got := MakeFederatedLearning("ns", "fl").Progress(2, 5, "loss", "0.2").ProgressRead(at).RoundClients(1, "a").Obj().Status.Progress
	if got.Round != 2 || got.Rounds != 5 || got.Metrics["loss"] != "0.2" || !got.UpdatedAt.Time.Equal(at) ||
		len(got.RoundClients) != 1 || !reflect.DeepEqual(got.RoundClients[0].Clusters, []string{"a"}) {
		t.Errorf("progress %+v", got)
	}
}

func TestMakeJob(t *testing.T) {
	two := *resource.NewQuantity(2, resource.DecimalSI)
	got := MakeJob("team-a", "train").Queue("gpu").Pods(3).GPUs(2).CPU("1").Model("NVIDIA-H100-80GB-HBM3").
		RunFor(90*time.Second).PodLabel("job", "train").Obj()
	want := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "train",
			Labels: map[string]string{"kueue.x-k8s.io/queue-name": "gpu"}},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](3), Completions: ptr.To[int32](3), BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job": "train"},
					Annotations: map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "1m30s"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					NodeSelector:  map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
					Containers: []corev1.Container{{Name: "train", Image: "trainer", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{"nvidia.com/gpu": two, corev1.ResourceCPU: resource.MustParse("1")},
						Limits:   corev1.ResourceList{"nvidia.com/gpu": two},
					}}},
				},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MakeJob (-want +got):\n%s", diff)
	}
}
