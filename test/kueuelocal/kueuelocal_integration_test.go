//go:build integration

package kueuelocal

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	h100       = "NVIDIA-H100-80GB-HBM3"
	queueLabel = "kueue.x-k8s.io/queue-name"
)

// TestKueueAdmitsGPUJobs: with Kueue's manager running on a spoke, a GPU Job in a LocalQueue is
// admitted, unsuspended and completes; Jobs over the ClusterQueue's 16-GPU quota wait suspended
// and run when quota frees; a Job naming a LocalQueue that does not exist stays suspended.
func TestKueueAdmitsGPUJobs(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	spoke := env.Spokes[0]
	bins, err := localk8s.FindKueue()
	if err != nil {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	exits := make(chan error, 4)
	kq, err := localk8s.StartKueue(ctx, localk8s.KueueOptions{Cluster: spoke.Cluster, Binaries: bins,
		OnExit: func(exit error) bool { exits <- exit; return true }})
	if err != nil {
		t.Fatalf("starting Kueue on %s: %v", spoke.Name, err)
	}
	t.Cleanup(kq.Stop)
	t.Logf("Kueue ready on %s in %s (pid %d, log %s)", spoke.Name, time.Since(start).Round(time.Millisecond), kq.Process.PID(), kq.Process.LogPath)

	env.AddNodes(t, spoke, localk8s.NodePool{Name: "h100", Count: 2, GPUModel: h100, GPUs: 8,
		CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi")})
	c := newClient(t, spoke)
	ns := env.Namespace(t, spoke)
	queues(t, c, ns, "kl-h100", 16)

	t.Run("a job in the queue is admitted and completes", func(t *testing.T) {
		j := gpuJob(ns, "first", "kl-h100", 1, 8, 2*time.Second)
		create(t, c, j)
		testenv.WaitJob(t, c, j, "unsuspended", 60*time.Second, func(j *batchv1.Job) bool { return !ptr.Deref(j.Spec.Suspend, true) })
		w := workloadOf(t, c, j)
		if !meta.IsStatusConditionTrue(w.Status.Conditions, kueuev1beta2.WorkloadAdmitted) {
			t.Errorf("workload %s of job %s is not Admitted: %+v", w.Name, j.Name, w.Status.Conditions)
		}
		testenv.WaitJob(t, c, j, "complete", 60*time.Second, testenv.JobComplete)
	})

	t.Run("jobs over the quota wait until quota frees", func(t *testing.T) {
		big := gpuJob(ns, "big", "kl-h100", 2, 8, 15*time.Second) // the whole 16-GPU quota
		create(t, c, big)
		testenv.WaitJob(t, c, big, "unsuspended", 60*time.Second, func(j *batchv1.Job) bool { return !ptr.Deref(j.Spec.Suspend, true) })
		second := gpuJob(ns, "second", "kl-h100", 1, 8, time.Second)
		third := gpuJob(ns, "third", "kl-h100", 1, 8, time.Second)
		create(t, c, second)
		create(t, c, third)
		for _, j := range []*batchv1.Job{second, third} {
			waitPending(t, c, j, "insufficient unused quota")
		}
		// Both were judged while big held the quota: they are still suspended.
		for _, j := range []*batchv1.Job{second, third} {
			got := &batchv1.Job{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(j), got); err != nil {
				t.Fatal(err)
			}
			if !ptr.Deref(got.Spec.Suspend, false) {
				t.Errorf("job %s ran while the quota was full (big not testenv.JobComplete)", j.Name)
			}
		}
		if done := getJob(t, c, big); testenv.JobComplete(done) {
			t.Fatalf("job big completed before the waiting jobs were checked; raise its run time")
		}
		for _, j := range []*batchv1.Job{big, second, third} {
			testenv.WaitJob(t, c, j, "complete", 60*time.Second, testenv.JobComplete)
		}
	})

	t.Run("a crashed manager is started again, and admits again", func(t *testing.T) {
		kq.Process.Kill()
		select {
		case exit := <-exits:
			t.Logf("the manager exited (%v); OnExit was told", exit)
		case <-time.After(30 * time.Second):
			t.Fatal("the manager was killed and OnExit was not called")
		}
		j := gpuJob(ns, "after-restart", "kl-h100", 1, 8, 2*time.Second)
		testenv.WaitFor(t, 90*time.Second, "Kueue's webhook to take a Job again", func(ctx context.Context) (bool, string, error) {
			err := c.Create(ctx, j)
			return err == nil, fmt.Sprint(err), nil
		})
		t.Cleanup(func() {
			_ = c.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground))
		})
		testenv.WaitJob(t, c, j, "complete", 90*time.Second, testenv.JobComplete)
	})

	t.Run("a job naming a missing local queue stays suspended", func(t *testing.T) {
		j := gpuJob(ns, "orphan", "no-such-queue", 1, 8, time.Second)
		create(t, c, j)
		waitPending(t, c, j, "LocalQueue no-such-queue doesn't exist")
		if got := getJob(t, c, j); !ptr.Deref(got.Spec.Suspend, false) {
			t.Errorf("job %s naming a missing LocalQueue was unsuspended", j.Name)
		}
	})
}

func newClient(t *testing.T, c *testenv.Cluster) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueuev1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// queues creates a ResourceFlavor for H100 nodes, a ClusterQueue named name with a quota of gpus
// GPUs of that flavor, and a LocalQueue name in ns pointing at it.
func queues(t *testing.T, c client.Client, ns, name string, gpus int64) {
	t.Helper()
	create(t, c, &kueuev1beta2.ResourceFlavor{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       kueuev1beta2.ResourceFlavorSpec{NodeLabels: map[string]string{localk8s.GPUProductLabel: h100}},
	})
	create(t, c, &kueuev1beta2.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueuev1beta2.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueuev1beta2.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{localk8s.GPUResource},
				Flavors: []kueuev1beta2.FlavorQuotas{{
					Name:      kueuev1beta2.ResourceFlavorReference(name),
					Resources: []kueuev1beta2.ResourceQuota{{Name: localk8s.GPUResource, NominalQuota: *resource.NewQuantity(gpus, resource.DecimalSI)}},
				}},
			}},
		},
	})
	create(t, c, &kueuev1beta2.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuev1beta2.ClusterQueueReference(name)},
	})
}

// gpuJob is a Job in queue of pods pods, each asking gpus GPUs, which kwok completes after runFor.
// It is created unsuspended; Kueue's webhook suspends it.
func gpuJob(ns, name, queue string, pods int32, gpus int64, runFor time.Duration) *batchv1.Job {
	return apitest.MakeJob(ns, name).Queue(queue).Pods(pods).GPUs(gpus).RunFor(runFor).Obj()
}

// create creates obj and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) { testenv.Create(t, c, obj) }

func getJob(t *testing.T, c client.Client, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	got := &batchv1.Job{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(j), got); err != nil {
		t.Fatalf("getting job %s: %v", j.Name, err)
	}
	return got
}

func workloadOf(t *testing.T, c client.Client, j *batchv1.Job) *kueuev1beta2.Workload {
	t.Helper()
	w, err := testenv.JobWorkload(context.Background(), c, j)
	if err != nil || w == nil {
		t.Fatalf("no workload for job %s (%v)", j.Name, err)
	}
	return w
}

// waitPending waits until Kueue has judged j's workload and left it without quota, with a
// QuotaReserved=False condition whose message contains msg.
func waitPending(t *testing.T, c client.Client, j *batchv1.Job, msg string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "job "+j.Name+" pending with "+msg, func(ctx context.Context) (bool, string, error) {
		w, err := testenv.JobWorkload(ctx, c, j)
		if err != nil || w == nil {
			return false, "no workload", err
		}
		cond := meta.FindStatusCondition(w.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved)
		if cond == nil {
			return false, fmt.Sprintf("workload %s has no QuotaReserved condition", w.Name), nil
		}
		return cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, msg),
			fmt.Sprintf("workload %s QuotaReserved %s %s: %s", w.Name, cond.Status, cond.Reason, cond.Message), nil
	})
}
