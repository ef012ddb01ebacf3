//go:build integration

package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/kueuesetup"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// multiKueueJobsEnv overrides how many jobs the MultiKueue benchmark submits (default 1,000).
const multiKueueJobsEnv = "FLOTILLA_BENCH_MK_JOBS"

const (
	// mkLeaseSeconds is the workers' lease period in the benchmark.
	mkLeaseSeconds = 10
	mkPlacement    = "mk-bench"
	mkCheck        = "mk-bench-multikueue"
)

// mkFleet is `flotilla dev up --with kueue` with three workers, set up for MultiKueue through the
// hub as a user would: a placement of the three, the hub's queues, the queue add-on on each.
type mkFleet struct {
	dir     string
	st      *devfleet.State
	hub     client.WithWatch
	workers []string
	// hubDir is the hub cluster's folder; hubProc, hubBinary and hubArgs are the `flotilla hub`
	// this benchmark restarted (switchCredentials; nil while devfleet's runs).
	hubDir    string
	hubProc   *localk8s.Process
	hubBinary string
	hubArgs   []string
}

// BenchmarkMultiKueue measures MultiKueue through the hub on a local fleet (`flotilla dev up
// --with kueue`: hub and three workers, each with its API server, scheduler, kwok, Kueue and
// flotilla agent, and `flotilla hub` with its dispatcher):
//
//   - jobs/s: 1,000 small Jobs (one pod, 10m CPU) submitted at once to the hub's LocalQueue, from
//     the first submission to the last admission on a worker (its Workload's status.clusterName on
//     the hub); target at least 100 jobs/s;
//   - failover: the API server of the worker holding most of the jobs stops; the time until every
//     job it held, and a job submitted right after the loss, are admitted on the other workers;
//     target under 60 s (Kueue's default is 15 minutes).
//
// `-bench .` (make bench) skips it: `make bench-multikueue`.
func BenchmarkMultiKueue(b *testing.B) {
	startRecord(b, "bench-multikueue")
	if !selected("MultiKueue") {
		b.Skip("select it by name (make bench-multikueue)")
	}
	n := sized(b, multiKueueJobsEnv, 1000, 6)
	param(b, "jobs", n)
	pr := progress{start: time.Now()}
	f := startMKFleet(b, pr)
	for i := range b.N {
		f.clear(b, pr, f.throughput(b, pr, fmt.Sprintf("r%d", i), n, ""))
	}
	// The same jobs through the Secret path (--kueue-credentials secret: kubeconfig Secrets the
	// hub composes), on workers emptied again, then once more through the ClusterProfile path
	// (so that a drift of the machine over the run shows), whose jobs the failover moves.
	f.switchCredentials(b, pr, kueue.SourceSecret)
	f.clear(b, pr, f.throughput(b, pr, "secret", n, "-secret-path"))
	f.switchCredentials(b, pr, kueue.SourceClusterProfile)
	admitted := f.throughput(b, pr, "again", n, "-again")
	f.failover(b, pr, admitted)
	report(b, 0, "ns/op")
}

// clear deletes the jobs of admitted and waits until the hub holds no Workload of theirs (MultiKueue
// then removes its copies from the workers), so that the next pass starts on empty workers.
func (f *mkFleet) clear(b *testing.B, pr progress, admitted map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	began := time.Now()
	for name := range admitted {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: kueuequeues.LocalQueueNS, Name: name}}
		if err := f.hub.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
	}
	left := 0
	err := poll(ctx, 10*time.Minute, func() (bool, error) {
		wls := &kueuev1beta2.WorkloadList{}
		if err := f.hub.List(ctx, wls, client.InNamespace(kueuequeues.LocalQueueNS)); err != nil {
			return false, err
		}
		left = len(wls.Items)
		return left == 0, nil
	})
	if err != nil {
		b.Fatalf("clearing %d jobs: %d Workloads left: %v", len(admitted), left, err)
	}
	pr.printf("the %d jobs deleted and their Workloads gone in %s", len(admitted), time.Since(began).Round(time.Millisecond))
}

// switchCredentials restarts `flotilla hub` with --kueue-credentials src and waits until every
// worker's MultiKueueCluster takes its credentials from there and Kueue reports it Active.
func (f *mkFleet) switchCredentials(b *testing.B, pr progress, src kueue.Source) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	binary, args := f.hubBinary, f.hubArgs
	if f.hubProc != nil {
		f.hubProc.Stop(5 * time.Second)
	} else {
		binary, args = stopRecorded(b, f.st, localk8s.HubName, devfleet.HubComponent)
	}
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "--kueue-credentials") })
	args = append(args, "--kueue-credentials="+string(src))
	f.hubBinary, f.hubArgs = binary, args
	began := time.Now()
	f.hubProc = restartHub(ctx, b, binary, args, f.hubDir)
	var last string
	err := poll(ctx, 3*time.Minute, func() (bool, error) {
		for _, w := range f.workers {
			mkc := &kueuev1beta2.MultiKueueCluster{}
			if err := f.hub.Get(ctx, client.ObjectKey{Name: w}, mkc); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			profile := mkc.Spec.ClusterSource.ClusterProfileRef != nil
			if profile != (src == kueue.SourceClusterProfile) || !meta.IsStatusConditionTrue(mkc.Status.Conditions, kueuev1beta2.MultiKueueClusterActive) {
				last = fmt.Sprintf("MultiKueueCluster %s: source %+v, conditions %+v", w, mkc.Spec.ClusterSource, mkc.Status.Conditions)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		b.Fatalf("switching to --kueue-credentials %s: %v; last %s (fleet logs in %s)", src, err, last, f.dir)
	}
	if err := waitMultiKueueActive(ctx, f.hub, mkCheck, f.workers, kueuequeues.Name); err != nil {
		b.Fatalf("MultiKueue not active after switching to --kueue-credentials %s: %v", src, err)
	}
	// Kueue's Active condition of a MultiKueueCluster stays True across the change of its source:
	// a few jobs admitted show the new path carries jobs before the pass.
	a := f.watchAdmissions(ctx, b)
	var probes []string
	probed := map[string]string{}
	for i := range f.workers {
		name := fmt.Sprintf("probe-%s-%d", src, i)
		if err := f.hub.Create(ctx, benchJob(name)); err != nil {
			b.Fatal(err)
		}
		probes = append(probes, name)
		probed[name] = ""
	}
	if err := a.wait(ctx, probes, func(string, string) bool { return true }); err != nil {
		b.Fatalf("probe jobs after switching to --kueue-credentials %s: %v (fleet logs in %s)", src, err, f.dir)
	}
	pr.printf("flotilla hub restarted with --kueue-credentials %s; every worker active through it, and a job admitted, %s later", src, time.Since(began).Round(time.Millisecond))
	f.clear(b, pr, probed)
}

func startMKFleet(b *testing.B, pr progress) *mkFleet {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kbins, err := localk8s.FindKueue()
	if err != nil {
		b.Fatal(err)
	}
	var spec strings.Builder
	spec.WriteString("apiVersion: dev.flotilla.io/v1alpha1\nkind: Fleet\nwith: [kueue]\nclusters:\n")
	f := &mkFleet{dir: b.TempDir()}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("worker-%d", i)
		f.workers = append(f.workers, name)
		fmt.Fprintf(&spec, "- name: %s\n  labels: {mk-bench: worker}\n  nodePools:\n  - {name: cpu, count: 4, cpu: \"64\", memory: 256Gi}\n", name)
	}
	fl, err := fleet.Parse("bench", []byte(spec.String()))
	if err != nil {
		b.Fatal(err)
	}
	pr.printf("starting a fleet: hub and %d workers, with Kueue and the flotilla agents", len(f.workers))
	f.st, err = devfleet.Up(ctx, devfleet.UpOptions{StateDir: f.dir, Fleet: fl, FleetSource: "bench", Binaries: binaries(b),
		Flotilla: buildFlotilla(b), Kueue: &kbins, Out: os.Stderr, Clock: clock.RealClock{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = devfleet.Down(f.dir, io.Discard) })
	for _, c := range f.st.Clusters {
		if c.Role != devfleet.RoleHub {
			continue
		}
		f.hubDir = filepath.Dir(c.Kubeconfig)
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			b.Fatal(err)
		}
		cfg.QPS, cfg.Burst = 500, 1000
		if f.hub, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			b.Fatal(err)
		}
	}
	objs := []client.Object{
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: kueue.DefaultNamespace, Name: "default"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: kueue.DefaultNamespace, Name: mkPlacement}, Spec: clusterv1beta1.PlacementSpec{
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mk-bench": "worker"}}}}}}},
	}
	objs = append(objs, kueuesetup.Hub(mkPlacement, mkCheck, 0)...)
	for _, w := range f.workers {
		objs = append(objs, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: w, Name: kueuequeues.Name}})
	}
	for _, o := range objs {
		if err := f.hub.Create(ctx, o); err != nil {
			b.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	// An administrator who wants fast failover shortens the workers' lease: the agent reports
	// every period whether its API server answers, and a silent cluster is lost after five.
	for _, w := range f.workers {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mc := &clusterv1.ManagedCluster{}
			if err := f.hub.Get(ctx, client.ObjectKey{Name: w}, mc); err != nil {
				return err
			}
			mc.Spec.LeaseDurationSeconds = mkLeaseSeconds
			return f.hub.Update(ctx, mc)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	err = waitMultiKueueActive(ctx, f.hub, mkCheck, f.workers, kueuequeues.Name)
	if err != nil {
		b.Fatalf("the MultiKueue set-up did not become active: %v (fleet logs in %s)", err, f.dir)
	}
	pr.printf("MultiKueue active through the hub: workers %v", f.workers)
	return f
}

// waitMultiKueueActive waits until the hub's MultiKueue AdmissionCheck check is Active and the
// add-ons addOns are Available on every worker.
func waitMultiKueueActive(ctx context.Context, hub client.Client, check string, workers []string, addOns ...string) error {
	return poll(ctx, 5*time.Minute, func() (bool, error) {
		ac := &kueuev1beta2.AdmissionCheck{}
		if err := hub.Get(ctx, client.ObjectKey{Name: check}, ac); err != nil {
			return false, err
		}
		if !meta.IsStatusConditionTrue(ac.Status.Conditions, kueuev1beta2.AdmissionCheckActive) {
			return false, nil
		}
		for _, w := range workers {
			for _, a := range addOns {
				mca := &addonv1alpha1.ManagedClusterAddOn{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: w, Name: a}, mca); err != nil {
					return false, err
				}
				if !meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
					return false, nil
				}
			}
		}
		return true, nil
	})
}

// benchJob is a small Job for the hub's LocalQueue: one pod of 10m CPU that kwok keeps running.
func benchJob(name string) *batchv1.Job {
	return apitest.MakeJob(kueuequeues.LocalQueueNS, name).Queue(kueuequeues.LocalQueueName).CPU("10m").RunFor(30 * time.Minute).Obj()
}

// finishedUnadmitted stands for the worker of a workload that finished without one.
const finishedUnadmitted = "(finished, no worker)"

// admissions watches the hub's Workloads and records when each job's first shows a worker.
type admissions struct {
	mu     sync.Mutex
	at     map[string]time.Time // job name -> admitted on a worker
	where  map[string]string
	notify chan struct{}
}

func (f *mkFleet) watchAdmissions(ctx context.Context, b *testing.B) *admissions {
	a := &admissions{at: map[string]time.Time{}, where: map[string]string{}, notify: make(chan struct{}, 1)}
	w, err := f.hub.Watch(ctx, &kueuev1beta2.WorkloadList{}, client.InNamespace(kueuequeues.LocalQueueNS))
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			wl, ok := ev.Object.(*kueuev1beta2.Workload)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			where := ""
			switch {
			case wl.Status.ClusterName != nil:
				where = *wl.Status.ClusterName
			case meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadFinished):
				// Seen in runs: Kueue on the hub marks a workload Finished that no worker
				// admitted. Counted apart, so that the run ends and reports it.
				where = finishedUnadmitted
			default:
				continue
			}
			job := wl.Labels["kueue.x-k8s.io/job-name"]
			if job == "" {
				for _, o := range wl.OwnerReferences {
					job = o.Name
				}
			}
			a.mu.Lock()
			if _, seen := a.at[job]; !seen || a.where[job] != where {
				a.at[job], a.where[job] = time.Now(), where
			}
			a.mu.Unlock()
			select {
			case a.notify <- struct{}{}:
			default:
			}
		}
	}()
	return a
}

// wait waits until every job of names is admitted and ok accepts where.
func (a *admissions) wait(ctx context.Context, names []string, ok func(job, where string) bool) error {
	for {
		a.mu.Lock()
		done := 0
		for _, n := range names {
			if w, seen := a.where[n]; seen && ok(n, w) {
				done++
			}
		}
		a.mu.Unlock()
		if done == len(names) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d jobs admitted: %w", done, len(names), ctx.Err())
		case <-a.notify:
		case <-time.After(time.Second):
		}
	}
}

// throughput submits n jobs at once and returns where each was admitted. tag ends the names of
// its figures ("" for the first run on the hub's default path).
func (f *mkFleet) throughput(b *testing.B, pr progress, prefix string, n int, tag string) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	a := f.watchAdmissions(ctx, b)
	names := make([]string, n)
	submitted := make([]time.Time, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-job-%05d", prefix, i)
	}
	pr.printf("submitting %d jobs to the hub's LocalQueue %s/%s", n, kueuequeues.LocalQueueNS, kueuequeues.LocalQueueName)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				submitted[i] = time.Now()
				if err := f.hub.Create(ctx, benchJob(names[i])); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	submitTook := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatalf("submitting: %v", err)
	}
	pr.printf("submitted in %s (%.0f jobs/s); waiting for admissions on the workers", submitTook.Round(time.Millisecond), float64(n)/submitTook.Seconds())
	if err := a.wait(ctx, names, func(string, string) bool { return true }); err != nil {
		b.Fatalf("admissions: %v (fleet logs in %s)", err, f.dir)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Time
	lat := make([]time.Duration, n)
	per := map[string]int{}
	out := map[string]string{}
	for i, name := range names {
		at := a.at[name]
		if at.After(last) {
			last = at
		}
		lat[i] = at.Sub(submitted[i])
		per[a.where[name]]++
		out[name] = a.where[name]
	}
	took := last.Sub(start)
	rate := float64(n) / took.Seconds()
	pr.printf("%s: %d jobs admitted on the workers in %s: %.1f jobs/s end to end (submission alone %.0f jobs/s); per job %s; per worker %v",
		cmp.Or(strings.TrimPrefix(tag, "-"), "first pass"), n, took.Round(time.Millisecond), rate, float64(n)/submitTook.Seconds(), latencySummary(lat), per)
	report(b, rate, "jobs/s"+tag)
	reportLatency(b, lat, time.Second, func(stat string) string { return stat + tag })
	return out
}

// failover stops the API server of the worker holding most jobs and measures the time until its
// jobs, and one submitted right after, are admitted on the other workers.
func (f *mkFleet) failover(b *testing.B, pr progress, admitted map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	count := map[string]int{}
	for _, w := range admitted {
		count[w]++
	}
	lost := slices.MaxFunc(f.workers, func(x, y string) int { return count[x] - count[y] })
	// The jobs it holds: admitted there and not finished (a finished job is not moved).
	wls := &kueuev1beta2.WorkloadList{}
	if err := f.hub.List(ctx, wls, client.InNamespace(kueuequeues.LocalQueueNS)); err != nil {
		b.Fatal(err)
	}
	var held []string
	finished := 0
	for _, wl := range wls.Items {
		if ptr.Deref(wl.Status.ClusterName, "") != lost {
			continue
		}
		if meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadFinished) {
			finished++
			continue
		}
		for _, o := range wl.OwnerReferences {
			held = append(held, o.Name)
		}
	}
	pid := 0
	for _, p := range f.st.Processes {
		if p.Cluster == lost && p.Component == "kube-apiserver" {
			pid = p.PID
		}
	}
	if pid == 0 {
		b.Fatalf("no API server of %s in the fleet's state", lost)
	}
	a := f.watchAdmissions(ctx, b)
	pr.printf("stopping the API server of %s (pid %d), which runs %d jobs (%d more finished there)", lost, pid, len(held), finished)
	stopped := time.Now()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	after := "after-loss"
	if err := f.hub.Create(ctx, benchJob(after)); err != nil {
		b.Fatal(err)
	}
	elsewhere := func(_, w string) bool { return w != lost }
	if err := a.wait(ctx, []string{after}, elsewhere); err != nil {
		b.Fatalf("the job submitted after the loss: %v", err)
	}
	a.mu.Lock()
	pending := a.at[after].Sub(stopped)
	a.mu.Unlock()
	pr.printf("a job submitted right after the loss was admitted on another worker %s after it", pending.Round(time.Millisecond))
	if err := a.wait(ctx, held, elsewhere); err != nil {
		b.Fatalf("the lost worker's jobs: %v", err)
	}
	a.mu.Lock()
	var last time.Time
	for _, j := range held {
		if a.at[j].After(last) {
			last = a.at[j]
		}
	}
	a.mu.Unlock()
	all := last.Sub(stopped)
	pr.printf("all %d jobs of %s admitted on other workers %s after its loss (workerLostTimeout %s)", len(held), lost, all.Round(time.Millisecond), devfleet.HubWorkerLostTimeout)
	report(b, pending.Seconds(), "s-failover-new-job")
	report(b, all.Seconds(), "s-failover-all-jobs")
}
