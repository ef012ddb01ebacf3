//go:build integration

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Parameters of BenchmarkHubAtScale.
const (
	// clustersEnv sets the number of clusters; develop with 200.
	clustersEnv     = "FLOTILLA_BENCH_CLUSTERS"
	defaultClusters = 5000
	// windowEnv overrides the steady-state window (a Go duration), for development only.
	windowEnv     = "FLOTILLA_BENCH_WINDOW"
	defaultWindow = 2 * time.Minute
	// hubLogEnv names a file to copy the hub's log to at the end (it is otherwise removed with
	// the benchmark's temporary folder).
	hubLogEnv = "FLOTILLA_BENCH_HUB_LOG"

	// fleetLeaseSeconds is every cluster's spec.leaseDurationSeconds: the load generator renews
	// each lease once per period.
	fleetLeaseSeconds = 60
	// probeLeaseSeconds is the probe clusters' lease period, short so that the wait for the taint
	// (LeaseGraceFactor periods) is under a minute.
	probeLeaseSeconds = 10
	probes            = 3
	// probeRenewals is how many times each probe's lease is renewed, a period apart, before it
	// stops: the probe behaves like a live agent first.
	probeRenewals = 3

	createWorkers = 16
	renewWorkers  = 8

	// cpuSample is the length of one CPU sample while the hub settles and during the window.
	cpuSample = 10 * time.Second
	// settledCPU: the hub has settled after the creation burst once two samples in a row stay
	// under this share of a core (or after maxSettle).
	settledCPU = 10.0
	minSettle  = time.Duration(fleetLeaseSeconds) * time.Second
	maxSettle  = 5 * time.Minute
)

// BenchmarkHubAtScale runs the real `flotilla hub` against one kube-apiserver holding N accepted
// ManagedClusters (FLOTILLA_BENCH_CLUSTERS, default 5000) whose leases a load generator renews
// once a minute each, spread evenly, in place of real agents. It reports the hub's CPU (share of
// one core) and resident memory at steady state, the API server's for context, and the time from
// a lease's last renewal to the unreachable taint on probe clusters with a 10 s lease.
//
// It takes about 10 minutes at 5000 clusters on 2 cores, so `-bench .` (make bench) skips it: run
// it by name, with `make bench-hub`.
func BenchmarkHubAtScale(b *testing.B) {
	startRecord(b, "bench-hub")
	if !selected("Hub") {
		b.Skip("runs for about 10 minutes: select it by name (make bench-hub)")
	}
	n := defaultClusters
	if smoke() {
		n = 20
	}
	if v := os.Getenv(clustersEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive number of clusters", clustersEnv, v)
		}
	}
	window := defaultWindow
	if smoke() {
		window = cpuSample
	}
	if v := os.Getenv(windowEnv); v != "" {
		var err error
		if window, err = time.ParseDuration(v); err != nil || window < cpuSample {
			b.Fatalf("%s=%q: want a duration of at least %s", windowEnv, v, cpuSample)
		}
	}
	param(b, "clusters", n)
	param(b, "window", window)
	bins := binaries(b)
	for range b.N {
		r := runHubAtScale(b, bins, n, window)
		report(b, float64(n), "clusters")
		report(b, r.registered.Seconds(), "s-registered")
		report(b, r.hubCPU, "cpu-%-of-core")
		report(b, mib(r.hubRSS), "MiB-rss")
		report(b, mib(r.hubPeakRSS), "MiB-rss-peak")
		report(b, r.apiCPU, "cpu-%-apiserver")
		report(b, mib(r.apiRSS), "MiB-rss-apiserver")
		report(b, r.taintExpected.Seconds(), "s-taint-expected")
		report(b, r.taintMeasured.Seconds(), "s-taint-measured")
		report(b, r.taintExcess.Seconds(), "s-taint-excess")
		report(b, r.taintExcessMax.Seconds(), "s-taint-excess-max")
	}
	report(b, 0, "ns/op")
}

type hubResult struct {
	registered                            time.Duration // from the first create until the hub had set up every cluster
	hubCPU, apiCPU                        float64       // % of one core over the window
	hubRSS, hubPeakRSS, apiRSS            int64         // bytes
	taintExpected, taintMeasured          time.Duration // mean over the probes
	taintExcess, taintExcessMax           time.Duration
	renewalsPerSecond, renewalLatencyMean float64
}

// progress writes one line on standard error, with the time since the benchmark started.
type progress struct{ start time.Time }

func (p progress) printf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hub-bench %6.1fs  %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

func runHubAtScale(b *testing.B, bins localk8s.Binaries, n int, window time.Duration) hubResult {
	ctx := context.Background()
	pr := progress{start: time.Now()}
	pr.printf("%d clusters, lease %d s, window %s: this takes about 10 minutes at 5000 clusters on 2 cores, longer on a busy machine (set-up burst, settling, window, taint probes)",
		n, fleetLeaseSeconds, window)
	dir := b.TempDir()

	// The hub's API server on an etcd of its own, and the CRDs.
	api := startHubAPIServer(b, bins, dir)
	c, e := api.Cluster, api.Etcd
	pr.printf("API server ready, CRDs installed")

	// The real hub, as a process of its own so that /proc measures it alone.
	hubLog := filepath.Join(dir, "hub", "logs", "flotilla-hub.log")
	hub := startHubProcess(b, buildFlotilla(b), c.Kubeconfig, hubLog)
	defer func() {
		hub.Stop(5 * time.Second)
		summarizeHubLog(pr, hubLog)
		if keep := os.Getenv(hubLogEnv); keep != "" {
			if data, err := os.ReadFile(hubLog); err == nil && os.WriteFile(keep, data, 0o644) == nil {
				pr.printf("hub log copied to %s", keep)
			}
		}
	}()
	pr.printf("hub started (pid %d), log %s", hub.PID(), hubLog)

	cl, cs := api.Client, api.Kube
	clk := clockTicks()
	alive := func() {
		if err := hub.ExitError(); err != nil {
			b.Fatal(err)
		}
	}

	// Registration: N accepted clusters, each reporting Joined and Available as its agent would.
	names := clusterNames(n)
	start := time.Now()
	var created atomic.Int64
	err := parallel(names, createWorkers, func(name string) error {
		if err := createCluster(ctx, cl, name, fleetLeaseSeconds); err != nil {
			return err
		}
		if k := created.Add(1); k%500 == 0 || int(k) == n {
			pr.printf("created %d/%d ManagedClusters (%.0f/s)", k, n, float64(k)/time.Since(start).Seconds())
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}

	// Renewals start at once: the first leases the hub created would otherwise expire before the
	// burst ends.
	lg := startLoadGen(cs, names, time.Duration(fleetLeaseSeconds)*time.Second)
	defer lg.stop()
	pr.printf("load generator started: %d lease renewals per second (%d clusters / %d s)", n/fleetLeaseSeconds, n, fleetLeaseSeconds)

	// Wait for the hub to set every cluster up: namespace, lease, acceptance, default set label,
	// and no unreachable taint (each reports Available).
	pr.printf("waiting for the hub to set up %d clusters (namespace, RBAC, lease, acceptance, default set label)", n)
	deadline := time.Now().Add(30*time.Minute + time.Duration(n)*200*time.Millisecond)
	for {
		alive()
		s, err := fleetState(ctx, cl, cs, n)
		if err == nil {
			pr.printf("hub: namespaces %d, leases %d, accepted %d, labeled %d, unreachable-tainted %d (of %d); %s; hub %s",
				s.namespaces, s.leases, s.accepted, s.labeled, s.tainted, n, lg.summary(), procSummary(hub, clk))
			if s.done(n) {
				break
			}
		} else {
			pr.printf("reading the fleet: %v", err)
		}
		if time.Now().After(deadline) {
			b.Fatalf("the hub did not set up %d clusters in time; last state %+v", n, s)
		}
		time.Sleep(10 * time.Second)
	}
	var r hubResult
	r.registered = time.Since(start)
	pr.printf("hub set up every cluster %.0f s after the first create; peak RSS so far %.0f MiB", r.registered.Seconds(), mib(statusBytes(b, hub, "VmHWM")))

	// Settling: at least one full renewal cycle, then until the hub's CPU stays low.
	settleStart := time.Now()
	calm := 0
	for {
		pct := cpuPercent(b, hub, clk, cpuSample)
		alive()
		pr.printf("settling: hub %.1f%% of a core over %s, RSS %.0f MiB; %s", pct, cpuSample, mib(rss(b, hub)), lg.summary())
		if pct < settledCPU {
			calm++
		} else {
			calm = 0
		}
		if elapsed := time.Since(settleStart); (elapsed >= minSettle || smoke()) && calm >= 2 {
			break
		} else if elapsed >= maxSettle {
			pr.printf("the hub's CPU has not dropped under %.0f%% in %s: measuring anyway", settledCPU, maxSettle)
			break
		}
	}

	// Steady state.
	pr.printf("steady state: measuring over %s", window)
	reqs0, reqErr := apiserverRequests(ctx, cs)
	lg.resetStats()
	hub0, api0, t0 := cpuTicksOf(b, hub), cpuTicksOf(b, c.APIServer), time.Now()
	for time.Since(t0) < window-cpuSample/2 {
		pct := cpuPercent(b, hub, clk, cpuSample)
		alive()
		pr.printf("window %3.0f s: hub %.1f%% of a core, RSS %.0f MiB; %s", time.Since(t0).Seconds(), pct, mib(rss(b, hub)), lg.summary())
	}
	hub1, api1, t1 := cpuTicksOf(b, hub), cpuTicksOf(b, c.APIServer), time.Now()
	elapsed := t1.Sub(t0).Seconds()
	r.hubCPU = float64(hub1-hub0) / float64(clk) / elapsed * 100
	r.apiCPU = float64(api1-api0) / float64(clk) / elapsed * 100
	r.hubRSS, r.hubPeakRSS = rss(b, hub), statusBytes(b, hub, "VmHWM")
	r.apiRSS = rss(b, c.APIServer)
	r.renewalsPerSecond, r.renewalLatencyMean = lg.rate(elapsed)
	pr.printf("steady state: hub %.2f%% of a core, RSS %.0f MiB (peak %.0f MiB); API server %.1f%% of a core, RSS %.0f MiB; etcd RSS %.0f MiB; renewals %.1f/s, mean latency %.1f ms",
		r.hubCPU, mib(r.hubRSS), mib(r.hubPeakRSS), r.apiCPU, mib(r.apiRSS), mib(rss(b, e.Process)), r.renewalsPerSecond, r.renewalLatencyMean)
	if reqErr == nil {
		if reqs1, err := apiserverRequests(ctx, cs); err == nil {
			printRequestDelta(pr, reqs0, reqs1, elapsed)
		}
	}

	// Taint latency, with the fleet's renewals still running.
	r.taintExpected = time.Duration(clusterv1.LeaseGraceFactor*probeLeaseSeconds) * time.Second
	pr.printf("taint latency: %d probe clusters with a %d s lease; each renewed %d times then stopped; expecting the taint %s after the last renewal",
		probes, probeLeaseSeconds, probeRenewals, r.taintExpected)
	lats := probeTaintLatency(b, pr, cl, cs, r.taintExpected)
	for _, l := range lats {
		r.taintMeasured += l
		r.taintExcessMax = max(r.taintExcessMax, l-r.taintExpected)
	}
	r.taintMeasured /= time.Duration(len(lats))
	r.taintExcess = r.taintMeasured - r.taintExpected
	pr.printf("taint latency: expected %s, measured %s on average, excess %s (max %s)",
		r.taintExpected, r.taintMeasured.Round(time.Millisecond), r.taintExcess.Round(time.Millisecond), r.taintExcessMax.Round(time.Millisecond))
	alive()
	pr.printf("done: %s", lg.summary())
	return r
}

// createCluster creates an accepted ManagedCluster and reports it Joined and Available, as its
// agent would once it runs.
func createCluster(ctx context.Context, cl client.Client, name string, leaseSeconds int32) error {
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: leaseSeconds},
	}
	if err := cl.Create(ctx, mc); err != nil {
		return fmt.Errorf("creating ManagedCluster %s: %w", name, err)
	}
	now := metav1.Now()
	for attempt := 0; ; attempt++ {
		desired := mc.DeepCopy()
		meta.SetStatusCondition(&desired.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
			Message: "simulated agent (hub benchmark)", LastTransitionTime: now,
		})
		meta.SetStatusCondition(&desired.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable",
			Message: "simulated agent (hub benchmark)", LastTransitionTime: now,
		})
		err := cl.Status().Patch(ctx, desired, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == 50 {
			return fmt.Errorf("reporting ManagedCluster %s Available: %w", name, err)
		}
		// The hub wrote the cluster meanwhile (finalizer, acceptance, label): read it again.
		time.Sleep(time.Duration(attempt*20) * time.Millisecond)
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
	}
}

// parallel runs f on every item with workers goroutines and returns the first error.
func parallel(items []string, workers int, f func(string) error) error {
	ch := make(chan string)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Go(func() {
			for it := range ch {
				if err := f(it); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, it := range items {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		ch <- it
	}
	close(ch)
	wg.Wait()
	return first
}

type fleetCounts struct{ namespaces, leases, accepted, labeled, tainted int }

func (s fleetCounts) done(n int) bool {
	return s.namespaces >= n && s.leases >= n && s.accepted >= n && s.labeled >= n && s.tainted == 0
}

// fleetState counts what the hub has done, reading from the API server's watch cache.
func fleetState(ctx context.Context, cl client.Client, cs kubernetes.Interface, n int) (fleetCounts, error) {
	var s fleetCounts
	cached := metav1.ListOptions{ResourceVersion: "0"}
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: clusteridentity.ClusterNameLabel})
	if err != nil {
		return s, err
	}
	s.namespaces = len(nss.Items)
	leases, err := cs.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{
		ResourceVersion: "0", FieldSelector: "metadata.name=" + clusterv1.ManagedClusterLeaseName,
	})
	if err != nil {
		return s, err
	}
	s.leases = len(leases.Items)
	mcs := &clusterv1.ManagedClusterList{}
	if err := cl.List(ctx, mcs, &client.ListOptions{Raw: &cached}); err != nil {
		return s, err
	}
	for i := range mcs.Items {
		mc := &mcs.Items[i]
		if meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
			s.accepted++
		}
		if _, ok := mc.Labels[clusterv1beta2.ClusterSetLabel]; ok {
			s.labeled++
		}
		if hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable) {
			s.tainted++
		}
	}
	return s, nil
}

func hasTaint(mc *clusterv1.ManagedCluster, key string) bool {
	return slices.ContainsFunc(mc.Spec.Taints, func(t clusterv1.Taint) bool { return t.Key == key })
}
