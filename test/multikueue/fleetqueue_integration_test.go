//go:build integration

package multikueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/core/queuesim"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
	"github.com/flotilla/flotilla/internal/local/kueuesetup"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// fairTeams are the FleetQueue's teams and weights in testFleetQueue.
var fairTeams = []struct {
	name   string
	weight int64
}{{"fs-a", 2}, {"fs-b", 1}, {"fs-c", 1}}

// testFleetQueue runs at the end of testDispatch, on its workers (two spokes, 16 H100s each) and
// its placement: three teams with weights 2:1:1 submit more than the fleet holds, and the hub's
// Kueue, with fair sharing on, shares the fleet's 32 GPUs by weight.
func testFleetQueue(t *testing.T, f *fleet) {
	ctx := context.Background()
	// The jobs of the tests before are gone, and so are their workloads and copies on the workers
	// (deleting a Job orphans its Workload unless told otherwise, and MultiKueue keeps the copy).
	background := client.PropagationPolicy(metav1.DeletePropagationBackground)
	if err := f.c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(kueuequeues.LocalQueueNS), background); err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeleteAllOf(ctx, &kueuev1beta2.Workload{}, client.InNamespace(kueuequeues.LocalQueueNS)); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(f.joined))
	for _, j := range f.joined {
		f.waitFreeH100(t, j.Name, 16)
		names = append(names, j.Name)
	}
	// The test before stopped one worker's API server and started it again: MultiKueue must have
	// reconnected to it before the teams' jobs can go there.
	f.waitWorkersActive(t, 2*wait, names...)
	spokes := make([]client.Client, 0, len(f.joined))
	for _, j := range f.joined {
		c, err := client.New(j.Spoke.RESTConfig(), client.Options{Scheme: scheme.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		spokes = append(spokes, c)
	}
	fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: "fs"}, Spec: queuev1alpha1.FleetQueueSpec{AdmissionCheck: mkCheck}}
	for _, tm := range fairTeams {
		if err := f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tm.name}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		fq.Spec.Teams = append(fq.Spec.Teams, queuev1alpha1.Team{Name: tm.name, Namespace: tm.name, Weight: *resource.NewQuantity(tm.weight, resource.DecimalSI)})
	}
	// A LocalQueue of team fs-c's that the first worker already has (its own, labeled so): the
	// FleetQueue must neither change it nor take it, so removing its work must not delete it.
	own := &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "fs-c", Name: fleetqueue.DefaultLocalQueue, Labels: map[string]string{"made-by": "team-c"}},
		Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuequeues.ClusterQueueName}}
	if err := spokes[0].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fs-c"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testenv.Create(t, spokes[0], own)
	testenv.Create(t, f.c, fq)
	// MultiKueue makes a job's copy in the same namespace and LocalQueue on the worker: the
	// FleetQueue brings them to every worker (a ManifestWork per worker).
	testenv.WaitFor(t, wait, "each team's namespace and LocalQueue on both workers", func(ctx context.Context) (bool, string, error) {
		for i, c := range spokes {
			for _, tm := range fairTeams {
				lq := &kueuev1beta2.LocalQueue{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: tm.name, Name: fleetqueue.DefaultLocalQueue}, lq); err != nil {
					return false, f.joined[i].Name + ": " + err.Error(), client.IgnoreNotFound(err)
				}
				if lq.Spec.ClusterQueue != kueuequeues.ClusterQueueName {
					return false, "", fmt.Errorf("%s: LocalQueue %s/%s points at %s, want %s", f.joined[i].Name, tm.name, lq.Name, lq.Spec.ClusterQueue, kueuequeues.ClusterQueueName)
				}
			}
		}
		return true, "", nil
	})
	testenv.WaitFor(t, wait, "FleetQueue fs to be Ready over both workers", func(ctx context.Context) (bool, string, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(fq), fq); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(fq.Status.Conditions, queuev1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue && fq.Status.Workers == 2 && len(fq.Status.Models) == 1 && fq.Status.Models[0].GPUs == 32,
			fmt.Sprintf("%+v, models %+v", c, fq.Status.Models), nil
	})

	// Each team submits 16 jobs of one pod with 2 GPUs: 48 jobs, 96 GPUs asked, 32 in the fleet.
	const perTeam, gpus = 16, 2
	start := time.Now()
	for i := range perTeam {
		for _, tm := range fairTeams {
			j := gpuJob(fmt.Sprintf("%s-%02d", tm.name, i), 1, gpus, 10*time.Minute)
			j.Namespace, j.Labels[kueuesetup.QueueLabel] = tm.name, fleetqueue.DefaultLocalQueue
			createJob(t, f.c, j)
		}
	}
	var shares map[string]int64
	testenv.WaitFor(t, 3*wait, "the hub to share the fleet's 32 GPUs 16:8:8", func(ctx context.Context) (bool, string, error) {
		var err error
		if shares, err = f.reservedGPUs(ctx); err != nil {
			return false, "", err
		}
		return shares["fs-a"] == 16 && shares["fs-b"] == 8 && shares["fs-c"] == 8, fmt.Sprintf("GPUs reserved per team %v", shares), nil
	})
	took := time.Since(start)
	jain := jainIndex(shares)
	// The wait above is the assertion (fair sharing off, Kueue admits the three queues' heads in
	// turn: about 11:11:10 jobs); Jain's index is the figure docs/queueing.md reports.
	t.Logf("fleet shared by weight 2:1:1 after %s: GPUs %v, Jain's index of share/weight %.3f (3 teams)", took.Round(time.Millisecond), shares, jain)
	// The dashboard's queue view (GET /api/queues) reads the same from real Kueue's ClusterQueue
	// status: each team holds its share, which is its fair share of 96 GPUs asked by weight.
	testenv.WaitFor(t, wait, "the queue view to show each team at its fair share", func(ctx context.Context) (bool, string, error) {
		views, err := fleetview.ReadQueues(ctx, f.c)
		if err != nil {
			return false, "", err
		}
		got := map[string]string{}
		for _, v := range views {
			for _, tm := range v.Teams {
				if v.Name == "fs" {
					got[tm.Name] = fmt.Sprintf("held %d fair %.0f pending %d (first: %d pods, %d GPUs)", tm.Used[h100], tm.Fair[h100], tm.Pending, head(tm.Queue).Pods, head(tm.Queue).GPUs)
				}
			}
		}
		want := map[string]string{"fs-a": "held 16 fair 16 pending 8 (first: 1 pods, 2 GPUs)", "fs-b": "held 8 fair 8 pending 12 (first: 1 pods, 2 GPUs)", "fs-c": "held 8 fair 8 pending 12 (first: 1 pods, 2 GPUs)"}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("%v, want %v", got, want), nil
	})
	// `flotilla explain workload` on a job still waiting says where its team stands: Kueue's
	// weighted shares of the cohort's ClusterQueues, read from real Kueue's status.
	testenv.WaitFor(t, wait, "explain workload to show the cohort's weighted shares", func(ctx context.Context) (bool, string, error) {
		l := &kueuev1beta2.WorkloadList{}
		if err := f.c.List(ctx, l, client.InNamespace("fs-b")); err != nil {
			return false, "", err
		}
		for _, wl := range l.Items {
			if meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved) {
				continue
			}
			e, err := fleetview.ExplainWorkload(ctx, f.c, wl.Namespace, wl.Name, time.Now())
			if err != nil {
				return false, "", err
			}
			fs := e.FairShare
			if fs == nil || fs.Cohort != "fs" || len(fs.ClusterQueues) != 3 || e.Queue == nil {
				return false, fmt.Sprintf("%s: fair share %+v, queue %+v", wl.Name, fs, e.Queue), nil
			}
			for _, q := range fs.ClusterQueues {
				if q.WeightedShare == 0 {
					return false, fmt.Sprintf("ClusterQueue %s has no weighted share yet: %+v", q.Name, fs), nil
				}
			}
			t.Logf("explain workload %s/%s: %s; fair share %+v; position %d of %d", wl.Namespace, wl.Name, e.Summary, fs, e.Queue.Position, e.Queue.Pending)
			return true, "", nil
		}
		return false, "no pending workload in fs-b", nil
	})
	// And the jobs that hold quota run on the workers, none copied where it cannot start.
	testenv.WaitFor(t, 2*wait, "every job holding quota to run on a worker", func(ctx context.Context) (bool, string, error) {
		l := &kueuev1beta2.WorkloadList{}
		running, reserved := 0, 0
		for _, tm := range fairTeams {
			if err := f.c.List(ctx, l, client.InNamespace(tm.name)); err != nil {
				return false, "", err
			}
			for _, wl := range l.Items {
				if meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved) {
					reserved++
					if wl.Status.ClusterName != nil {
						running++
					}
				}
			}
		}
		return reserved == 16 && running == reserved, fmt.Sprintf("%d of %d on a worker", running, reserved), nil
	})
	// The jobs go with the test; their copies on the workers with them.
	for _, tm := range fairTeams {
		if err := f.c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(tm.name), background); err != nil {
			t.Error(err)
		}
	}
	workerQueuesRemoved(t, f, fq, spokes, own)
}

// workerQueuesRemoved deletes the FleetQueue and its worker queues' works (the garbage collector
// would, by their owner reference) and checks what goes on the workers: the LocalQueues the works
// made, and nothing else: not the first worker's own LocalQueue (unchanged), not the namespaces.
func workerQueuesRemoved(t *testing.T, f *fleet, fq *queuev1alpha1.FleetQueue, spokes []client.Client, own *kueuev1beta2.LocalQueue) {
	t.Helper()
	ctx := context.Background()
	if err := f.c.Delete(ctx, fq); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	for _, j := range f.joined {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: j.Name, Name: fleetqueue.WorkPrefix + fq.Name}}
		if err := f.c.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, wait, "the LocalQueues the works made to go from the second worker", func(ctx context.Context) (bool, string, error) {
		for _, tm := range fairTeams {
			err := spokes[1].Get(ctx, client.ObjectKey{Namespace: tm.name, Name: fleetqueue.DefaultLocalQueue}, &kueuev1beta2.LocalQueue{})
			if !apierrors.IsNotFound(err) {
				return false, tm.name + " still there", client.IgnoreNotFound(err)
			}
		}
		return true, "", nil
	})
	got := &kueuev1beta2.LocalQueue{}
	if err := spokes[0].Get(ctx, client.ObjectKeyFromObject(own), got); err != nil {
		t.Fatalf("the first worker's own LocalQueue %s/%s went with the FleetQueue's work: %v", own.Namespace, own.Name, err)
	}
	if got.Labels["made-by"] != "team-c" || len(got.OwnerReferences) != 0 {
		t.Errorf("the first worker's own LocalQueue was changed or taken: labels %v, owners %v", got.Labels, got.OwnerReferences)
	}
	for _, tm := range fairTeams {
		if err := spokes[1].Get(ctx, client.ObjectKey{Name: tm.name}, &corev1.Namespace{}); err != nil {
			t.Errorf("namespace %s the work made on the second worker: %v, want it left behind", tm.name, err)
		}
	}
}

// reservedGPUs is the GPUs each team's workloads hold on the hub (QuotaReserved).
func (f *fleet) reservedGPUs(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, tm := range fairTeams {
		l := &kueuev1beta2.WorkloadList{}
		if err := f.c.List(ctx, l, client.InNamespace(tm.name)); err != nil {
			return nil, err
		}
		for _, wl := range l.Items {
			if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved) || wl.Status.Admission == nil {
				continue
			}
			for _, psa := range wl.Status.Admission.PodSetAssignments {
				if q, ok := psa.ResourceUsage["nvidia.com/gpu"]; ok {
					out[tm.name] += q.Value()
				}
			}
		}
	}
	return out, nil
}

// jainIndex is Jain's fairness index of each team's GPUs over its weight (queuesim.Jain): 1 when
// every team has exactly its weighted share, 1/n at worst.
func jainIndex(gpus map[string]int64) float64 {
	teams := make([]queuesim.Team, 0, len(fairTeams))
	held := make([]float64, 0, len(fairTeams))
	for _, tm := range fairTeams {
		teams = append(teams, queuesim.Team{Name: tm.name, Weight: float64(tm.weight)})
		held = append(held, float64(gpus[tm.name]))
	}
	j, _ := queuesim.Jain(teams, held)
	return j
}

// head is the first of a team's pending workloads, or none.
func head(q []fleetview.PendingWorkload) fleetview.PendingWorkload {
	if len(q) == 0 {
		return fleetview.PendingWorkload{}
	}
	return q[0]
}
