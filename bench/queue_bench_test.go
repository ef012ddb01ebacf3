//go:build integration

package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/core/queuesim"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/kueuesetup"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Environment variables of BenchmarkFleetQueue.
const (
	// queueJobsEnv is the trace's job count (default 80).
	queueJobsEnv = "FLOTILLA_BENCH_QUEUE_JOBS"
	// queueCompressEnv is how many times faster than the trace the replay runs (default 20).
	queueCompressEnv = "FLOTILLA_BENCH_QUEUE_COMPRESS"
	// queueOutEnv is the CSV of utilization over time (default a temporary file).
	queueOutEnv = "FLOTILLA_BENCH_QUEUE_CSV"
	// queueReclaimEnv is phase (b)'s FleetQueue spec.reclaim (default: the FleetQueue's, Any).
	queueReclaimEnv = "FLOTILLA_BENCH_QUEUE_RECLAIM"
)

const (
	qPlacement = "queue-bench"
	qCheck     = "queue-bench-multikueue"
	// qStaticCQ is phase (a)'s one hub ClusterQueue with static per-model quotas.
	qStaticCQ = "bench-static"
)

// qTeam is a team of the trace and its namespace on the hub and the workers.
func qTeam(name string) string { return "team-" + name }

// qFleet is the running fleet of BenchmarkFleetQueue.
type qFleet struct {
	dir   string
	st    *devfleet.State
	kbins localk8s.KueueBinaries
	hub   client.WithWatch
	// hubCluster is the hub as localk8s knows it, to restart its Kueue.
	hubCluster *localk8s.Cluster
	// configs and clients of every cluster, the hub first.
	names   []string
	configs map[string]*rest.Config
	cs      map[string]kubernetes.Interface
	ctrl    map[string]client.Client
	// hubKueue and hubProc are the hub's Kueue and flotilla hub this benchmark restarted (nil
	// while devfleet's run).
	hubKueue *localk8s.Kueue
	hubProc  *localk8s.Process
	hubArgs  []string
}

// BenchmarkFleetQueue replays one small, time-compressed trace of internal/core/queuesim's generator
// on a local fleet (hub and three GPU workers, Kueue on each) twice, one phase after the other:
//
//   - (a) MultiKueue's defaults: the hub's Kueue with the AllAtOnce dispatcher and no fair
//     sharing, one ClusterQueue with static quotas (the fleet's GPUs per model), Flotilla's
//     dispatcher off;
//   - (b) Flotilla: the hub's Kueue with dispatcher flotilla.io/placement-ranked and fair sharing,
//     a FleetQueue of the three teams, Flotilla's dispatcher on;
//
// and prints, per phase, GPU utilization, queueing delay, JCT, makespan, Jain's index, misfits
// and API writes per job (bench/README.md, "Fleet queue on a real fleet"). `make bench-queue`.
func BenchmarkFleetQueue(b *testing.B) {
	rec := startRecord(b, "bench-queue")
	// Phase (a), the peer, is Kueue's AllAtOnce dispatcher without fair sharing, with the local
	// fleet's client rate and workerLostTimeout, not Kueue's released 5 requests/s and 15 minutes.
	rec.Peer = fmt.Sprintf("MultiKueue: Kueue's AllAtOnce dispatcher, no fair sharing; the hub's client of each worker at %d requests/s and workerLostTimeout %s (local fleets', not Kueue's released 5/s and 15m)",
		devfleet.HubRemoteQPS, devfleet.HubWorkerLostTimeout)
	rec.Param("reclaim", cmpOr(os.Getenv(queueReclaimEnv), "Any"))
	if !selected("FleetQueue") {
		b.Skip("select it by name (make bench-queue)")
	}
	n := sized(b, queueJobsEnv, 80, 6)
	compress := float64(sized(b, queueCompressEnv, 20, 100))
	param(b, "jobs", n)
	param(b, "compress", compress)
	pr := progress{start: time.Now()}
	tc := qTrace(n, qSeed)
	jobs, err := queuesim.Generate(qWorkers, tc)
	if err != nil {
		b.Fatal(err)
	}
	pr.printf("trace: %s", traceSummary(jobs, compress))
	f := startQueueFleet(b, pr)
	var results []*phaseResult
	for i, ph := range []phase{phaseDefaults, phaseFlotilla} {
		f.configure(b, pr, ph)
		results = append(results, f.replay(b, pr, ph, jobs, compress, tc.Teams))
		if i == 0 {
			f.clear(b, pr, ph)
		}
	}
	fmt.Fprint(os.Stderr, "\n"+queueTable(results, jobs, compress)+"\n")
	out := os.Getenv(queueOutEnv)
	if out == "" {
		out = filepath.Join(os.TempDir(), fmt.Sprintf("flotilla-bench-queue-%d.csv", time.Now().Unix()))
	}
	if err := os.WriteFile(out, utilizationCSV(results), 0o644); err != nil {
		b.Fatal(err)
	}
	pr.printf("utilization over time written to %s", out)
	for _, r := range results {
		r.report(b)
	}
	report(b, 0, "ns/op")
}

// traceSummary is the trace's size, teams, GPUs and span, before and after compression.
func traceSummary(jobs []queuesim.Job, compress float64) string {
	teams := map[string]int{}
	gpuSec, maxGPUs, span, longest := 0.0, 0, 0.0, 0.0
	for _, j := range jobs {
		teams[j.Team]++
		gpuSec += float64(j.GPUs()) * j.Duration
		maxGPUs = max(maxGPUs, j.GPUs())
		span = max(span, j.Submit)
		longest = max(longest, j.Duration)
	}
	return fmt.Sprintf("%d jobs (teams %v), %.0f GPU-seconds, largest job %d GPUs, submissions over %.0f s, longest job %.0f s; compressed %gx: submissions over %.0f s, %.0f GPU-seconds over the fleet's %d GPUs",
		len(jobs), teams, gpuSec, maxGPUs, span, longest, compress, span/compress, gpuSec/compress, qWorkers.GPUs())
}

func startQueueFleet(b *testing.B, pr progress) *qFleet {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kbins, err := localk8s.FindKueue()
	if err != nil {
		b.Fatal(err)
	}
	var spec strings.Builder
	spec.WriteString("apiVersion: dev.flotilla.io/v1alpha1\nkind: Fleet\nwith: [kueue]\nclusters:\n")
	for _, w := range qWorkers {
		fmt.Fprintf(&spec, "- name: %s\n  labels: {queue-bench: worker}\n  nodePools:\n  - {name: gpu, count: %d, cpu: \"64\", memory: 512Gi, gpu: {model: %s, count: %d}}\n",
			w.Name, w.Nodes, w.Model.Name, w.Model.PerNode)
	}
	fl, err := fleet.Parse("bench", []byte(spec.String()))
	if err != nil {
		b.Fatal(err)
	}
	f := &qFleet{dir: b.TempDir(), kbins: kbins, configs: map[string]*rest.Config{}, cs: map[string]kubernetes.Interface{}, ctrl: map[string]client.Client{}}
	pr.printf("starting a fleet: hub and %d GPU workers (%d GPUs), with Kueue and the flotilla agents", len(qWorkers), qWorkers.GPUs())
	f.st, err = devfleet.Up(ctx, devfleet.UpOptions{StateDir: f.dir, Fleet: fl, FleetSource: "bench", Binaries: binaries(b),
		Flotilla: buildFlotilla(b), Kueue: &kbins, Out: os.Stderr, Clock: clock.RealClock{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if f.hubProc != nil {
			f.hubProc.Stop(5 * time.Second)
		}
		if f.hubKueue != nil {
			f.hubKueue.Stop()
		}
		_ = devfleet.Down(f.dir, io.Discard)
	})
	for _, c := range f.st.Clusters {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			b.Fatal(err)
		}
		cfg.QPS, cfg.Burst = 200, 400
		f.configs[c.Name] = cfg
		if f.cs[c.Name], err = kubernetes.NewForConfig(cfg); err != nil {
			b.Fatal(err)
		}
		if f.ctrl[c.Name], err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			b.Fatal(err)
		}
		if c.Role == devfleet.RoleHub {
			f.names = append([]string{c.Name}, f.names...)
			f.hubCluster = &localk8s.Cluster{Name: c.Name, Dir: filepath.Dir(c.Kubeconfig), Server: c.Server, Kubeconfig: c.Kubeconfig, Config: cfg}
			if f.hub, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
				b.Fatal(err)
			}
		} else {
			f.names = append(f.names, c.Name)
		}
	}
	objs := []client.Object{
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: kueue.DefaultNamespace, Name: "default"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: kueue.DefaultNamespace, Name: qPlacement}, Spec: clusterv1beta1.PlacementSpec{
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"queue-bench": "worker"}}}}}}},
	}
	// The two AdmissionChecks of the usual set-up; the queues are each phase's.
	for _, o := range kueuesetup.Hub(qPlacement, qCheck, 0) {
		if _, ok := o.(*kueuev1beta2.AdmissionCheck); ok {
			objs = append(objs, o)
		}
	}
	for _, w := range qWorkers {
		for _, a := range []string{kueuequeues.Name, resourceusage.Name} {
			objs = append(objs, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: w.Name, Name: a}})
		}
	}
	for _, o := range objs {
		if err := f.hub.Create(ctx, o); err != nil {
			b.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	// The teams' namespaces everywhere; on the workers, their LocalQueue of the add-on's
	// ClusterQueue (MultiKueue copies a job into the same namespace and LocalQueue).
	for _, name := range f.names {
		for _, tm := range queuesim.DefaultTrace(1, 0).Teams {
			ns := qTeam(tm.Name)
			if err := f.ctrl[name].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
				b.Fatal(err)
			}
			if name == localk8s.HubName {
				continue
			}
			lq := &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fleetqueue.DefaultLocalQueue},
				Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuequeues.ClusterQueueName}}
			if err := f.ctrl[name].Create(ctx, lq); err != nil {
				b.Fatalf("cluster %s: creating LocalQueue %s/%s: %v", name, ns, lq.Name, err)
			}
		}
	}
	workers := make([]string, 0, len(qWorkers))
	for _, w := range qWorkers {
		workers = append(workers, w.Name)
	}
	err = waitMultiKueueActive(ctx, f.hub, qCheck, workers, kueuequeues.Name, resourceusage.Name)
	if err != nil {
		b.Fatalf("the MultiKueue set-up did not become active: %v (fleet logs in %s)", err, f.dir)
	}
	pr.printf("MultiKueue active through the hub: workers %v", f.names[1:])
	return f
}
