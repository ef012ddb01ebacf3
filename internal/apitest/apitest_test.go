package apitest

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
