//go:build integration

package federatedlearning

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func (f *fleet) openFL(name string, min int32, port int32) *flv1alpha1.FederatedLearning {
	fl := f.flower(name, min)
	fl.Spec.Framework = flv1alpha1.FrameworkOpenFL
	fl.Spec.Server.Image, fl.Spec.Client.Image = "quay.io/example/openfl:latest", "quay.io/example/openfl:latest"
	fl.Spec.Server.Listeners = []flv1alpha1.ListenerSpec{{Name: "server-listener", Port: port, Type: flv1alpha1.ListenerTypeNodePort, IP: "192.0.2.10"}}
	fl.Spec.Server.Storage = flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypePersistentVolumeClaim, Name: name + "-model", Path: "/data/models", Size: "1Gi"}
	return fl
}

// TestOpenFLFederation runs OCM's OpenFL path on the simulated hub: the claim, the Service, the
// server Job with the decided clusters, a ManifestWork per client cluster with its own data
// path, the Job's success completing the federation, and the works of a cluster no longer decided
// removed (OCM's stay).
func TestOpenFLFederation(t *testing.T) {
	f := start(t, "fl-openfl")
	ctx := context.Background()
	f.cluster(t, "site-a", map[string]string{dataClaim: "/data/a"}, false)
	f.cluster(t, "site-b", map[string]string{dataClaim: "/data/b"}, false)
	f.cluster(t, "open-edge", nil, false)
	fl := f.openFL("brain", 2, 30089)
	testenv.Create(t, f.c, fl)

	work := fl.Namespace + ".brain-client"
	f.waitWorks(t, work, "site-a", "site-b")
	j := &batchv1.Job{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "brain-server"}, j); err != nil {
		t.Fatal(err)
	}
	wantServer := []string{"server", "--server-ip=192.0.2.10", "--server-port=30089", "--num-rounds=3", "--cols=site-a,site-b", "--model-dir=/data/models"}
	if diff := cmp.Diff(wantServer, j.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("server Job args (-want +got):\n%s", diff)
	}
	if v := j.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].PersistentVolumeClaim == nil || v[0].PersistentVolumeClaim.ClaimName != "brain-model" {
		t.Errorf("server Job volumes = %+v, want the claim brain-model", v)
	}
	svc := &corev1.Service{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "brain-server"}, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].NodePort != 30089 {
		t.Errorf("Service %s is %s with ports %+v, want NodePort 30089", svc.Name, svc.Spec.Type, svc.Spec.Ports)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "brain-model"}, &corev1.PersistentVolumeClaim{}); err != nil {
		t.Errorf("the model's claim: %v", err)
	}
	for _, c := range []string{"site-a", "site-b"} {
		w := &workv1.ManifestWork{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: c, Name: work}, w); err != nil {
			t.Fatal(err)
		}
		cj := decode[batchv1.Job](t, w.Spec.Workload.Manifests[1])
		want := []string{"client", "--name=" + c, "--data-path=/data/" + strings.TrimPrefix(c, "site-"), "--server-ip=192.0.2.10", "--server-port=30089", "--num-rounds=3", "--model-dir=/data/models"}
		if diff := cmp.Diff(want, cj.Spec.Template.Spec.Containers[0].Args); diff != "" {
			t.Errorf("client Job of %s (-want +got):\n%s", c, diff)
		}
	}
	got := f.waitStatus(t, fl, "Running with the listener's address", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.Phase == flv1alpha1.PhaseRunning && len(st.Listeners) == 1
	})
	if diff := cmp.Diff([]flv1alpha1.ListenerStatus{{Name: "server-listener", Type: flv1alpha1.ListenerTypeNodePort, Address: "192.0.2.10", Port: 30089}}, got.Status.Listeners); diff != "" {
		t.Errorf("status.listeners (-want +got):\n%s", diff)
	}

	// site-b no longer holds data: its ManifestWork goes.
	f.setClaims(t, "site-b", nil)
	f.waitWorks(t, work, "site-a")

	// The server Job succeeds: Completed, with OCM's message.
	completeJob(t, f.c, j)
	got = f.waitStatus(t, fl, "Completed", func(st *flv1alpha1.FederatedLearningStatus) bool { return st.Phase == flv1alpha1.PhaseCompleted })
	if got.Status.Message != "Model training successful. Check storage for details" {
		t.Errorf("message = %q", got.Status.Message)
	}

	if err := f.c.Delete(ctx, fl); err != nil {
		t.Fatal(err)
	}
	f.waitWorks(t, work)
}

// completeJob marks a Job succeeded, as the Job controller would once its pod exits 0 (the
// hub's nodes are simulated: the pod never runs).
func completeJob(t *testing.T, c client.Client, j *batchv1.Job) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur := &batchv1.Job{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(j), cur); err != nil {
			return err
		}
		now := metav1.Now()
		if cur.Status.StartTime == nil {
			cur.Status.StartTime = &metav1.Time{Time: now.Add(-time.Second)}
		}
		cur.Status.CompletionTime, cur.Status.Succeeded, cur.Status.Active = &now, 1, 0
		cur.Status.Conditions = append(cur.Status.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "CompletionsReached"},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "CompletionsReached"})
		return c.Status().Update(context.Background(), cur)
	})
	if err != nil {
		t.Fatalf("completing Job %s: %v", j.Name, err)
	}
}

// TestBadInput: each spec the controller cannot carry out is Failed with the field and the fix,
// and is tried again once fixed; an object of the controller's name that it did not make is
// reported and left alone; flower-addon off everywhere says where to switch it on.
func TestBadInput(t *testing.T) {
	f := start(t, "fl-bad")
	ctx := context.Background()
	f.cluster(t, "bad-site", map[string]string{dataClaim: "/data/a"}, false)

	// A NodePort outside the range, then fixed.
	fl := f.openFL("bad-port", 1, 8080)
	testenv.Create(t, f.c, fl)
	f.waitStatus(t, fl, "Failed naming the port", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionFailed)
		return st.Phase == flv1alpha1.PhaseFailed && c != nil && c.Reason == federatedlearning.ReasonInvalidSpec &&
			strings.Contains(st.Message, "spec.server.listeners[0].port 8080 is outside the NodePort range 30000-32767")
	})
	testenv.Update(t, f.c, fl, func() { fl.Spec.Server.Listeners[0].Port = 30090 })
	f.waitStatus(t, fl, "running once fixed", func(st *flv1alpha1.FederatedLearningStatus) bool { return st.Phase == flv1alpha1.PhaseRunning })

	// Storage that is not implemented.
	s3 := f.openFL("s3", 1, 30091)
	s3.Spec.Server.Storage = flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeS3Bucket, S3: &flv1alpha1.S3StorageSpec{BucketName: "models"}}
	testenv.Create(t, f.c, s3)
	f.waitStatus(t, s3, "Failed naming the storage", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.Phase == flv1alpha1.PhaseFailed && strings.Contains(st.Message, "spec.server.storage.type S3Bucket is not implemented")
	})
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: s3.Namespace, Name: "s3"}, &clusterv1beta1.Placement{}); err == nil {
		t.Errorf("a FederatedLearning with a bad spec made its Placement: nothing should be half-created")
	}

	// minAvailableClients above what numberOfClusters can select: the API server refuses it.
	tooMany := f.flower("too-many", 3)
	two := int32(2)
	tooMany.Spec.Client.Placement.NumberOfClusters = &two
	if err := f.c.Create(ctx, tooMany); err == nil || !strings.Contains(err.Error(), "minAvailableClients") {
		t.Errorf("creating minAvailableClients 3 over numberOfClusters 2: err = %v, want a refusal naming minAvailableClients", err)
	}

	// A Deployment of the ServerApp's name that someone else made: reported, left alone.
	theirs := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: f.set.Namespace, Name: "taken-serverapp", Labels: map[string]string{"app": "theirs"}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "theirs"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "theirs:1"}}}}}}
	testenv.Create(t, f.c, theirs)
	taken := f.flower("taken", 1)
	// A SuperLink of the user's own, not flower-addon's: the ServerApp needs no hub CA, so this
	// holds whichever tests ran before.
	taken.Spec.Server.SuperLink = "superlink.ml-team:9091"
	testenv.Create(t, f.c, taken)
	f.waitStatus(t, taken, "a name conflict reported", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionServerReady)
		return c != nil && c.Reason == federatedlearning.ReasonNameConflict && strings.Contains(c.Message, "Deployment "+f.set.Namespace+"/taken-serverapp exists")
	})
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(theirs), theirs); err != nil {
		t.Fatal(err)
	}
	if theirs.Spec.Template.Spec.Containers[0].Image != "theirs:1" || len(theirs.OwnerReferences) != 0 {
		t.Errorf("the controller changed a Deployment it did not make: %+v", theirs)
	}

	// A ManifestWork of the client work's name in a cluster's namespace that someone else made:
	// that cluster gets no client (NameConflict), and the work is neither changed nor deleted,
	// not while the federation runs and not when it goes.
	otherWork := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "bad-site", Name: f.set.Namespace + ".taken-work-client"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"theirs","namespace":"default"}}`)}}}}}}
	testenv.Create(t, f.c, otherWork)
	takenWork := f.openFL("taken-work", 1, 30092)
	testenv.Create(t, f.c, takenWork)
	f.waitStatus(t, takenWork, "bad-site excluded by the name conflict", func(st *flv1alpha1.FederatedLearningStatus) bool {
		for _, c := range st.Clients {
			if c.Cluster == "bad-site" {
				return c.State == flv1alpha1.ClientExcluded && c.Reason == federatedlearning.ReasonNameConflict
			}
		}
		return false
	})
	if err := f.c.Delete(ctx, takenWork); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the FederatedLearning gone, the other's ManifestWork kept as it was", func(ctx context.Context) (bool, string, error) {
		gone := f.c.Get(ctx, client.ObjectKeyFromObject(takenWork), &flv1alpha1.FederatedLearning{}) != nil
		cur := &workv1.ManifestWork{}
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(otherWork), cur); err != nil {
			return false, "", fmt.Errorf("the other's ManifestWork: %w", err)
		}
		if string(cur.Spec.Workload.Manifests[0].Raw) != string(otherWork.Spec.Workload.Manifests[0].Raw) || len(cur.Labels) != 0 {
			return false, "", fmt.Errorf("the controller changed a ManifestWork it did not make: %+v", cur)
		}
		return gone, "", nil
	})

	// Flower with flower-addon available nowhere: the message says where to switch it on.
	off := f.flower("no-addon", 1)
	testenv.Create(t, f.c, off)
	f.waitStatus(t, off, "flower-addon missing named", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.Phase == flv1alpha1.PhaseWaiting && strings.Contains(st.Message, "flotilla addon enable flower-addon --clusters bad-site")
	})
	if err := f.c.Delete(ctx, taken); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the other's Deployment kept after the FederatedLearning is deleted", func(ctx context.Context) (bool, string, error) {
		gone := f.c.Get(ctx, client.ObjectKeyFromObject(taken), &flv1alpha1.FederatedLearning{}) != nil
		err := f.c.Get(ctx, client.ObjectKeyFromObject(theirs), &appsv1.Deployment{})
		return gone && err == nil, "", nil
	})
}
