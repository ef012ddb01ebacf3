//go:build integration

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Parameters of BenchmarkWorkDelivery.
const (
	workClustersEnv     = "FLOTILLA_BENCH_WORK_CLUSTERS"
	defaultWorkClusters = 1000
	worksPerCluster     = 10
	// workRateEnv is how many works a second are created (spread over the clusters in turn).
	workRateEnv     = "FLOTILLA_BENCH_WORK_RATE"
	defaultWorkRate = 50
	// workLogEnv, when set, makes the first cluster's agent log on standard error.
	workLogEnv = "FLOTILLA_BENCH_WORK_LOG"
)

// BenchmarkWorkDelivery measures the time from creating a ManifestWork on the hub to its
// Applied=True condition back on the hub, with N simulated clusters (1,000 by default) and 10
// works each. The real `flotilla hub` runs as its own process (its admission webhook checks every
// work); each cluster has a namespace on the hub and one on a spoke API server they all share,
// and a work agent (internal/agent/work, as `flotilla agent` runs it) in this process, reaching
// the hub as the administrator (the simulated clusters did not register). Each work is a
// ConfigMap for the cluster's namespace on the spoke, and works are named after their cluster
// (workName). Works are created at a steady rate (50 a
// second by default), so the figure is latency, not a queue; a watch on the hub sees Applied.
// It reports the p50, p99 and max with their sample count, the hub's CPU and memory, and the agents' (this process's, which
// also creates the works and watches them).
//
// It takes several minutes, so `-bench .` (make bench) skips it: `make bench-work`.
func BenchmarkWorkDelivery(b *testing.B) {
	startRecord(b, "bench-work")
	if !selected("Work") {
		b.Skip("runs for several minutes: select it by name (make bench-work)")
	}
	n := sized(b, workClustersEnv, defaultWorkClusters, 5)
	rate := envInt(b, workRateEnv, defaultWorkRate)
	param(b, "clusters", n)
	param(b, "rate", rate)
	ctrllog.SetLogger(logr.Discard())
	bins := binaries(b)
	hubBin := buildFlotilla(b)
	for range b.N {
		r := runWorkDelivery(b, bins, hubBin, n, rate)
		report(b, float64(n), "clusters")
		reportLatency(b, r.latencies, time.Millisecond, func(stat string) string { return "applied-" + stat })
		report(b, r.hubCPU, "cpu-%-hub")
		report(b, mib(r.hubRSS), "MiB-rss-hub")
		report(b, r.agentsCPU, "cpu-%-agents")
		report(b, mib(r.agentsRSS), "MiB-rss-agents")
		for name, cpu := range r.apiCPU {
			report(b, cpu, "cpu-%-"+name)
		}
	}
	report(b, 0, "ns/op")
}

type workResult struct {
	latencies         []time.Duration
	hubCPU, agentsCPU float64 // % of one core while the works were created and applied
	hubRSS, agentsRSS int64
	// apiCPU is the CPU of the hub's and the spoke's API servers and etcds, % of one core.
	apiCPU map[string]float64
}

// staticHub is a work.Hub whose credentials never change.
type staticHub struct{ c *registration.HubClients }

func (h staticHub) Current() *registration.HubClients { return h.c }
func (h staticHub) Changed() <-chan struct{}          { return nil }

func runWorkDelivery(b *testing.B, bins localk8s.Binaries, hubBin string, n, rate int) workResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr := progress{start: time.Now()}
	pr.printf("%d clusters x %d works, created at %d a second", n, worksPerCluster, rate)
	dir := b.TempDir()
	hubAPI := startHubAPIServer(b, bins, filepath.Join(dir, "hub"))
	spokeAPI := startHubAPIServer(b, bins, filepath.Join(dir, "spoke"))
	hub := startHubProcess(b, hubBin, hubAPI.Kubeconfig, filepath.Join(dir, "flotilla-hub.log"))
	defer hub.Stop(5 * time.Second)
	clk := clockTicks()

	clusters := make([]string, n)
	for i := range clusters {
		clusters[i] = fmt.Sprintf("cluster-%04d", i)
	}
	err := parallel(clusters, createWorkers, func(name string) error {
		for _, c := range []client.Client{hubAPI.Client, spokeAPI.Client} {
			if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	pr.printf("%d cluster namespaces on the hub and the spoke", n)

	baseRSS := selfRSS(b)
	stopAgents := startWorkAgents(ctx, b, clusters, hubAPI, spokeAPI, false)
	defer func() { cancel(); stopAgents() }()
	// The agents list their namespaces and settle before the clock starts.
	time.Sleep(15*time.Second + time.Duration(n)*20*time.Millisecond)
	pr.printf("%d work agents running; this process %.0f MiB resident (%.0f MiB before them); hub %s",
		n, mib(selfRSS(b)), mib(baseRSS), procSummary(hub, clk))

	applied := watchApplied(ctx, b, hubAPI.Client)
	total := n * worksPerCluster
	sent := make([]time.Time, total)
	servers := map[string]*localk8s.Process{
		"hub-apiserver": hubAPI.APIServer, "hub-etcd": hubAPI.Etcd.Process,
		"spoke-apiserver": spokeAPI.APIServer, "spoke-etcd": spokeAPI.Etcd.Process,
	}
	servers0 := map[string]int64{}
	for name, p := range servers {
		servers0[name] = cpuTicksOf(b, p)
	}
	hubReqs0, hubReqErr := apiserverRequests(ctx, hubAPI.Kube)
	spokeReqs0, spokeReqErr := apiserverRequests(ctx, spokeAPI.Kube)
	hub0, self0, t0 := cpuTicksOf(b, hub), selfCPU(b), time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range total {
		<-tick.C
		cluster, name := clusters[i%n], workName(clusters[i%n], i/n)
		w := benchWork(b, cluster, name)
		sent[i] = time.Now()
		if err := hubAPI.Client.Create(ctx, w); err != nil {
			b.Fatalf("creating ManifestWork %s/%s: %v", cluster, name, err)
		}
		if (i+1)%(total/10) == 0 {
			pr.printf("created %d/%d works; %d applied; hub %s", i+1, total, applied.count(), procSummary(hub, clk))
		}
	}
	tick.Stop()
	deadline := time.Now().Add(5 * time.Minute)
	for applied.count() < total {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d works were applied 5 minutes after the last was created", applied.count(), total)
		}
		time.Sleep(200 * time.Millisecond)
	}
	elapsed := time.Since(t0).Seconds()
	var r workResult
	r.hubCPU = float64(cpuTicksOf(b, hub)-hub0) / float64(clk) / elapsed * 100
	r.agentsCPU = (selfCPU(b) - self0).Seconds() / elapsed * 100
	r.hubRSS, r.agentsRSS = rss(b, hub), selfRSS(b)
	if hubReqErr == nil && spokeReqErr == nil {
		for _, api := range []struct {
			name   string
			c      *hubAPIServer
			before map[string]float64
		}{{"hub", hubAPI, hubReqs0}, {"spoke", spokeAPI, spokeReqs0}} {
			if after, err := apiserverRequests(ctx, api.c.Kube); err == nil {
				pr.printf("requests to the %s API server:", api.name)
				printRequestDelta(pr, api.before, after, elapsed)
			}
		}
	}
	r.apiCPU = map[string]float64{}
	for name, p := range servers {
		r.apiCPU[name] = float64(cpuTicksOf(b, p)-servers0[name]) / float64(clk) / elapsed * 100
	}
	for i := range total {
		r.latencies = append(r.latencies, applied.at(clusters[i%n], workName(clusters[i%n], i/n)).Sub(sent[i]))
	}
	pr.printf("create to Applied=True on the hub: %s; hub %.1f%% of a core, %.0f MiB; agents (this process) %.1f%% of a core, %.0f MiB; "+
		"API servers and etcds (%% of a core): hub %.0f + %.0f, spoke %.0f + %.0f",
		latencySummary(r.latencies), r.hubCPU, mib(r.hubRSS), r.agentsCPU, mib(r.agentsRSS),
		r.apiCPU["hub-apiserver"], r.apiCPU["hub-etcd"], r.apiCPU["spoke-apiserver"], r.apiCPU["spoke-etcd"])
	return r
}

// workName names a cluster's k-th work after the cluster: the clusters share one spoke, and a
// work's AppliedManifestWork there is named after the hub and the work only (as OCM names it), so
// two clusters' works of one name would claim the same AppliedManifestWork.
func workName(cluster string, k int) string { return fmt.Sprintf("%s-work-%d", cluster, k) }

// benchWork is one work: a ConfigMap for the cluster's namespace on the spoke.
func benchWork(b *testing.B, cluster, name string) *workv1.ManifestWork {
	raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": cluster, "name": name}, "data": map[string]string{"model": "llm-7b", "epochs": "3"}})
	if err != nil {
		b.Fatal(err)
	}
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
}

// appliedTracker records when a watch on the hub first saw each work Applied=True.
type appliedTracker struct {
	mu    sync.Mutex
	first map[string]time.Time
}

func watchApplied(ctx context.Context, b *testing.B, c client.WithWatch) *appliedTracker {
	t := &appliedTracker{first: map[string]time.Time{}}
	list := &workv1.ManifestWorkList{}
	if err := c.List(ctx, list); err != nil {
		b.Fatal(err)
	}
	go t.follow(ctx, c, list.ResourceVersion)
	return t
}

// follow watches ManifestWorks from resourceVersion rv, and watches again from where it was when
// the API server ends the watch (a busy one does), listing first if that is too old.
func (t *appliedTracker) follow(ctx context.Context, c client.WithWatch, rv string) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, &workv1.ManifestWorkList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		gone := false
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				gone = true // most likely 410 Gone: rv is too old
				break
			}
			mw, ok := ev.Object.(*workv1.ManifestWork)
			if !ok {
				continue
			}
			rv = mw.ResourceVersion
			if ev.Type != watch.Deleted {
				t.saw(mw, time.Now())
			}
		}
		w.Stop()
		if gone {
			list := &workv1.ManifestWorkList{}
			if err := c.List(ctx, list); err == nil {
				now := time.Now()
				for i := range list.Items {
					t.saw(&list.Items[i], now)
				}
				rv = list.ResourceVersion
			}
		}
	}
}

func (t *appliedTracker) saw(mw *workv1.ManifestWork, at time.Time) {
	if !meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.first[mw.Namespace+"/"+mw.Name]; !seen {
		t.first[mw.Namespace+"/"+mw.Name] = at
	}
}

func (t *appliedTracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.first)
}

func (t *appliedTracker) at(ns, name string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first[ns+"/"+name]
}

// selfCPU is this process's user plus system CPU time.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfRSS is this process's resident memory.
func selfRSS(b *testing.B) int64 { return statusBytesOf(b, os.Getpid(), "this process", "VmRSS") }

// startWorkAgents runs a work agent per cluster in this process, each reaching the hub and the
// shared spoke as the administrator; ownHash gives each its own hub hash (works of one name in
// every cluster, as add-ons make, would otherwise claim one AppliedManifestWork on the shared
// spoke). The returned function waits for the agents once ctx has ended.
func startWorkAgents(ctx context.Context, b *testing.B, clusters []string, hubAPI, spokeAPI *hubAPIServer, ownHash bool) (wait func()) {
	var wg sync.WaitGroup
	for i, name := range clusters {
		log := logr.Discard()
		if i == 0 && os.Getenv(workLogEnv) != "" {
			log = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, "agent", name, prefix, args) }, funcr.Options{})
		}
		var hash string
		if ownHash {
			hash = work.HubHash(hubAPI.Config.Host + "/" + name)
		}
		a, err := work.New(work.Options{
			ClusterName: name, AgentID: name, Spoke: rest.CopyConfig(spokeAPI.Config), Log: log, HubHash: hash,
			Hub: staticHub{&registration.HubClients{Config: rest.CopyConfig(hubAPI.Config)}},
		})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { _ = a.Run(ctx) })
	}
	return wg.Wait
}
