//go:build integration

package multikueue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/kueuesetup"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	h100 = "NVIDIA-H100-80GB-HBM3"
	// mkCheck is the hub's MultiKueue AdmissionCheck; placementCheck OCM's placement check,
	// whose placement and MultiKueueConfig share its name.
	mkCheck        = "mk-dispatch"
	placementCheck = "mk-gpu"
)

// hubQueues makes the hub's side of MultiKueue as a user would (kueuesetup.Hub).
func (f *fleet) hubQueues(t *testing.T) {
	t.Helper()
	for _, o := range kueuesetup.Hub(placementCheck, mkCheck, 1000) {
		testenv.Create(t, f.c, o)
	}
}

// rankedPlacement makes the placement of the placement check: the clusters labeled
// mk-gpu=worker, ranked by the AddOnPlacementScore mk/rank.
func (f *fleet) rankedPlacement(t *testing.T, ranks map[string]int32) {
	t.Helper()
	ctx := context.Background()
	for cluster, v := range ranks {
		s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: "mk", Namespace: cluster}}
		testenv.Create(t, f.c, s)
		s.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "rank", Value: v}}
		if err := f.c.Status().Update(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Create(t, f.c, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: placementCheck}, Spec: clusterv1beta1.PlacementSpec{
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mk-gpu": "worker"}}}}},
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{{Weight: ptr.To[int32](1), ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
				Type: clusterv1beta1.ScoreCoordinateTypeAddOn, AddOn: &clusterv1beta1.AddOnScore{ResourceName: "mk", ScoreName: "rank"}}}}},
	}})
}

// enable switches the built-in add-on on for every joined cluster.
func (f *fleet) enable(t *testing.T, addOn string) {
	t.Helper()
	for _, j := range f.joined {
		testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: j.Name, Name: addOn}})
	}
}

// gpuJob is a Job for the hub's LocalQueue of pods pods of gpus H100s each, which kwok on the
// worker completes after runFor.
func gpuJob(name string, pods int32, gpus int64, runFor time.Duration) *batchv1.Job {
	return apitest.MakeJob(kueuequeues.LocalQueueNS, name).Queue(kueuequeues.LocalQueueName).
		Pods(pods).GPUs(gpus).CPU("1").Model(h100).RunFor(runFor).Obj()
}

// workloadOf is the hub's Workload of job j.
func (f *fleet) workloadOf(ctx context.Context, j *batchv1.Job) (*kueuev1beta2.Workload, error) {
	return testenv.JobWorkload(ctx, f.c, j)
}

// createJob creates j and deletes it when the test ends with its Workload and pods (a Job's
// default deletion orphans them, and MultiKueue would keep the worker's copy running).
func createJob(t *testing.T, c client.Client, j *batchv1.Job) {
	t.Helper()
	// Kueue's admission webhook refuses writes while its manager restarts (testenv starts it
	// again if it crashes, as a kubelet would): a client tries again, as kubectl's user would.
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		err = c.Create(context.Background(), j)
		if err == nil || !strings.Contains(err.Error(), "failed calling webhook") || time.Now().After(deadline) {
			break
		}
		t.Logf("creating Job %s: %v; trying again", j.Name, err)
	}
	if err != nil {
		t.Fatalf("creating Job %s: %v", j.Name, err)
	}
	t.Cleanup(func() {
		err := c.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting Job %s: %v", j.Name, err)
		}
	})
}

// waitRunsOn waits until the hub's workload of j is admitted on worker, and returns how long
// that took from start.
func (f *fleet) waitRunsOn(t *testing.T, j *batchv1.Job, worker string, timeout time.Duration, start time.Time) time.Duration {
	t.Helper()
	var took time.Duration
	testenv.WaitFor(t, timeout, fmt.Sprintf("job %s to be admitted on %s", j.Name, worker), func(ctx context.Context) (bool, string, error) {
		wl, err := f.workloadOf(ctx, j)
		if err != nil || wl == nil {
			return false, "no workload yet", client.IgnoreNotFound(err)
		}
		took = time.Since(start)
		return ptr.Deref(wl.Status.ClusterName, "") == worker, fmt.Sprintf("clusterName %q, nominated %v, checks %+v",
			ptr.Deref(wl.Status.ClusterName, ""), wl.Status.NominatedClusterNames, wl.Status.AdmissionChecks), nil
	})
	return took
}

// waitComplete waits until job j on the hub reports completion, as MultiKueue copies it back.
func (f *fleet) waitComplete(t *testing.T, j *batchv1.Job, timeout time.Duration) {
	t.Helper()
	testenv.WaitJob(t, f.c, j, "to complete on the hub", timeout, testenv.JobComplete)
}

func testDispatch(t *testing.T, f *fleet) {
	one, two := f.joined[0].Name, f.joined[1].Name
	for _, j := range f.joined {
		f.env.AddNodes(t, j.Spoke, localk8s.NodePool{Name: "h100", Count: 2, GPUModel: h100, GPUs: 8,
			CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi")})
	}
	f.enable(t, kueuequeues.Name)
	f.enable(t, resourceusage.Name)
	f.bindSet(t, "mk-gpu", map[string]map[string]string{one: {"mk-gpu": "worker"}, two: {"mk-gpu": "worker"}})
	// The second spoke ranks first: the choice follows the placement, not the names.
	f.rankedPlacement(t, map[string]int32{one: 10, two: 90})
	f.hubQueues(t)
	f.waitActive(t, placementCheck, metav1.ConditionTrue, two, one)
	f.waitWorkersActive(t, wait, one, two)
	hub := f.c

	t.Run("a job submitted once to the hub runs on the first-ranked worker", func(t *testing.T) {
		first := gpuJob("mk-first", 2, 8, 20*time.Second)
		createJob(t, hub, first)
		took := f.waitRunsOn(t, first, two, wait, time.Now())
		t.Logf("job %s (2 pods x 8 GPUs) admitted on %s %s after submission", first.Name, two, took.Round(time.Millisecond))

		t.Run("that worker full, the next job goes to the other", func(t *testing.T) {
			next := gpuJob("mk-next", 1, 8, 2*time.Second)
			createJob(t, hub, next)
			took := f.waitRunsOn(t, next, one, wait, time.Now())
			t.Logf("job %s admitted on %s %s after submission", next.Name, one, took.Round(time.Millisecond))
			f.waitComplete(t, next, wait)
		})
	})

	t.Run("a gang that fits in total but on no node waits on the hub with the numbers", func(t *testing.T) {
		for _, w := range []string{one, two} {
			f.waitFreeH100(t, w, 16) // each worker: 16 free H100s in all, 8 on each of its two nodes
		}
		big := gpuJob("mk-no-node", 1, 16, 2*time.Second)
		createJob(t, hub, big)
		var wl *kueuev1beta2.Workload
		testenv.WaitFor(t, wait, "a NoWorkerFits event on the workload of mk-no-node", func(ctx context.Context) (bool, string, error) {
			var err error
			if wl, err = f.workloadOf(ctx, big); err != nil || wl == nil {
				return false, "no workload yet", client.IgnoreNotFound(err)
			}
			evs := &eventsv1.EventList{}
			if err := hub.List(ctx, evs, client.InNamespace(wl.Namespace)); err != nil {
				return false, "", err
			}
			for _, e := range evs.Items {
				if e.Regarding.UID == wl.UID && e.Reason == kueue.ReasonNoWorkerFits {
					for _, w := range []string{one, two} {
						want := w + ": needs 1 pod with 16 " + h100 + " each: none fit on its nodes (free per node: 8 on 2 nodes)"
						if !strings.Contains(e.Note, want) {
							return false, fmt.Sprintf("event %q lacks %q", e.Note, want), nil
						}
					}
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("no event yet; nominated %v", wl.Status.NominatedClusterNames), nil
		})
		// Rounds go by (3 s each) and still no worker is offered it: no copy anywhere.
		time.Sleep(4 * kueue.DefaultRound)
		ctx := context.Background()
		if err := hub.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			t.Fatal(err)
		}
		if len(wl.Status.NominatedClusterNames) != 0 || wl.Status.ClusterName != nil {
			t.Errorf("workload %s: nominated %v, clusterName %v; want no worker offered it", wl.Name, wl.Status.NominatedClusterNames, wl.Status.ClusterName)
		}
		for _, j := range f.joined {
			spoke, err := client.New(j.Spoke.RESTConfig(), client.Options{Scheme: scheme.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			l := &kueuev1beta2.WorkloadList{}
			if err := spoke.List(ctx, l, client.InNamespace(wl.Namespace)); err != nil {
				t.Fatal(err)
			}
			for _, w := range l.Items {
				if w.Name == wl.Name {
					t.Errorf("worker %s has a copy of workload %s", j.Name, w.Name)
				}
			}
		}
		propagation := metav1.DeletePropagationBackground
		if err := hub.Delete(ctx, big, &client.DeleteOptions{PropagationPolicy: &propagation}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a worker whose API server stops leaves the config, and its workloads run elsewhere", func(t *testing.T) {
		// Both workers idle again (the first jobs done or deleted), as their figures say.
		for _, w := range []string{one, two} {
			f.waitFreeH100(t, w, 16)
		}
		running := gpuJob("mk-running", 1, 8, 10*time.Minute)
		createJob(t, hub, running)
		// It goes where the placement and the figures say (the first job's GPUs may still be
		// freeing on the second spoke); that worker is the one lost.
		var lostJoined, survivor = f.joined[1], one
		testenv.WaitFor(t, wait, "job mk-running to be admitted on a worker", func(ctx context.Context) (bool, string, error) {
			wl, err := f.workloadOf(ctx, running)
			if err != nil || wl == nil || wl.Status.ClusterName == nil {
				return false, "", client.IgnoreNotFound(err)
			}
			if *wl.Status.ClusterName == one {
				lostJoined, survivor = f.joined[0], two
			}
			return true, "", nil
		})
		admitted := time.Now()
		// Running there, as the hub's copy of its status says. That copy (active: 1) is what
		// kept a lost worker's jobs from being requeued on a 1.36+ hub until Kueue's stop of the
		// Job cleared it (tools/build-kueue.sh, third patch; docs/kueue.md, "Failover").
		testenv.WaitJob(t, hub, running, "to show its pod active in the hub's copy of its status", wait,
			func(j *batchv1.Job) bool { return j.Status.Active > 0 })

		lost := lostJoined.Spoke.Cluster
		stopped := time.Now() // the API server stops gracefully, over a few seconds
		lost.StopAPIServer()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := lost.StartAPIServer(ctx); err != nil {
				t.Errorf("starting %s's API server again: %v", lostJoined.Name, err)
			}
		})
		// Submitted after the loss, while the hub may still list the worker.
		pending := gpuJob("mk-pending", 1, 8, 5*time.Second)
		createJob(t, hub, pending)

		f.waitActive(t, placementCheck, metav1.ConditionTrue, survivor)
		left := time.Since(stopped)
		tookPending := f.waitRunsOn(t, pending, survivor, wait, stopped)
		tookRunning := f.waitRunsOn(t, running, survivor, wait+workerLostTimeout, stopped)
		t.Logf("%s's API server stopped: it left the MultiKueueConfig after %s; a job submitted then was admitted on %s after %s; "+
			"the job running on %s (admitted %s before the loss) was admitted on %s after %s (workerLostTimeout %s)",
			lostJoined.Name, left.Round(time.Millisecond), survivor, tookPending.Round(time.Millisecond),
			lostJoined.Name, stopped.Sub(admitted).Round(time.Millisecond), survivor, tookRunning.Round(time.Millisecond), workerLostTimeout)
		f.waitComplete(t, pending, wait)
	})

	// On the same workers, placement and add-ons, which go when testDispatch ends.
	t.Run("three teams share the fleet by weight through a FleetQueue", func(t *testing.T) { testFleetQueue(t, f) })
}

// waitFreeH100 waits until the cluster's ResourceUsage shows n free H100s.
func (f *fleet) waitFreeH100(t *testing.T, cluster string, n int64) {
	t.Helper()
	testenv.WaitFor(t, 2*wait, fmt.Sprintf("%s to have %d free H100s", cluster, n), func(ctx context.Context) (bool, string, error) {
		u := &usagev1alpha1.ResourceUsage{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName}, u); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		fig := u.Status.Figures(localk8s.GPUResource.String(), h100)
		if fig == nil {
			return false, "no H100 figures", nil
		}
		return fig.Free.Value() == n, "free " + fig.Free.String(), nil
	})
}

func findCondition(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}
