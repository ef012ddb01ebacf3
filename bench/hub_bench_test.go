//go:build integration

package bench

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/clusteridentity"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/localk8s"
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
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), "Hub") {
		b.Skip("runs for about 10 minutes: select it by name (make bench-hub)")
	}
	n := defaultClusters
	if v := os.Getenv(clustersEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive number of clusters", clustersEnv, v)
		}
	}
	window := defaultWindow
	if v := os.Getenv(windowEnv); v != "" {
		var err error
		if window, err = time.ParseDuration(v); err != nil || window < cpuSample {
			b.Fatalf("%s=%q: want a duration of at least %s", windowEnv, v, cpuSample)
		}
	}
	bins := binaries(b)
	for range b.N {
		r := runHubAtScale(b, bins, n, window)
		b.ReportMetric(float64(n), "clusters")
		b.ReportMetric(r.registered.Seconds(), "s-registered")
		b.ReportMetric(r.hubCPU, "cpu-%-of-core")
		b.ReportMetric(mib(r.hubRSS), "MiB-rss")
		b.ReportMetric(mib(r.hubPeakRSS), "MiB-rss-peak")
		b.ReportMetric(r.apiCPU, "cpu-%-apiserver")
		b.ReportMetric(mib(r.apiRSS), "MiB-rss-apiserver")
		b.ReportMetric(r.taintExpected.Seconds(), "s-taint-expected")
		b.ReportMetric(r.taintMeasured.Seconds(), "s-taint-measured")
		b.ReportMetric(r.taintExcess.Seconds(), "s-taint-excess")
		b.ReportMetric(r.taintExcessMax.Seconds(), "s-taint-excess-max")
	}
	b.ReportMetric(0, "ns/op")
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
	e, err := localk8s.StartEtcd(ctx, localk8s.EtcdOptions{Name: "etcd", Dir: filepath.Join(dir, "etcd"), Binaries: bins})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Stop()
	c, err := localk8s.StartCluster(ctx, localk8s.ClusterOptions{
		Name: "hub", Dir: filepath.Join(dir, "hub"), Binaries: bins, EtcdURL: e.URL, APIServerOnly: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	if _, err := install.Embedded(ctx, c.Config, install.Options{}); err != nil {
		b.Fatal(err)
	}
	pr.printf("API server ready, CRDs installed")

	// The real hub, as a process of its own so that /proc measures it alone.
	hubBin := filepath.Join(dir, "flotilla")
	build := exec.Command("go", "build", "-o", hubBin, "github.com/flotilla/flotilla/cmd/flotilla")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building flotilla: %v\n%s", err, out)
	}
	hubLog := filepath.Join(dir, "hub", "logs", "flotilla-hub.log")
	hub, err := localk8s.StartProcess("hub/flotilla-hub", hubBin, []string{
		"hub", "--kubeconfig", c.Kubeconfig, "--leader-elect=false",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
	}, hubLog, false)
	if err != nil {
		b.Fatal(err)
	}
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

	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 5000, 10000
	cl, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	clk := clockTicks()
	alive := func() {
		if err := hub.ExitError(); err != nil {
			b.Fatal(err)
		}
	}

	// Registration: N accepted clusters, each reporting Joined and Available as its agent would.
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%05d", i)
	}
	start := time.Now()
	var created atomic.Int64
	err = parallel(names, createWorkers, func(name string) error {
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
		if elapsed := time.Since(settleStart); elapsed >= minSettle && calm >= 2 {
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

// loadGen renews leases in place of agents: each cluster's lease once per period, the renewals
// spread evenly over the period, one merge patch of spec.renewTime each (an agent's Get and
// Update cost the hub the same: one Lease update event).
type loadGen struct {
	cs     kubernetes.Interface
	cancel context.CancelFunc
	done   sync.WaitGroup

	ok, notFound, failed, late atomic.Int64
	latencyNanos               atomic.Int64
	lastErr                    atomic.Value
}

func startLoadGen(cs kubernetes.Interface, names []string, period time.Duration) *loadGen {
	ctx, cancel := context.WithCancel(context.Background())
	lg := &loadGen{cs: cs, cancel: cancel}
	type job struct {
		name string
		due  time.Time
	}
	jobs := make(chan job, len(names))
	for range renewWorkers {
		lg.done.Go(func() {
			for j := range jobs {
				if time.Since(j.due) > time.Second {
					lg.late.Add(1)
				}
				t := time.Now()
				_, err := renewLease(ctx, lg.cs, j.name)
				switch {
				case err == nil:
					lg.ok.Add(1)
					lg.latencyNanos.Add(int64(time.Since(t)))
				case apierrors.IsNotFound(err):
					lg.notFound.Add(1) // the hub has not created this lease yet
				case ctx.Err() != nil:
				default:
					lg.failed.Add(1)
					lg.lastErr.Store(err.Error())
				}
			}
		})
	}
	lg.done.Go(func() {
		defer close(jobs)
		interval := period / time.Duration(len(names))
		start := time.Now()
		for i := 0; ; i++ {
			due := start.Add(time.Duration(i) * interval)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(due)):
			}
			select {
			case jobs <- job{name: names[i%len(names)], due: due}:
			case <-ctx.Done():
				return
			}
		}
	})
	return lg
}

// renewLease sets a cluster's lease renewTime to now and returns the time written.
func renewLease(ctx context.Context, cs kubernetes.Interface, name string) (time.Time, error) {
	now := time.Now().Truncate(time.Microsecond)
	body := fmt.Sprintf(`{"spec":{"renewTime":%q}}`, now.UTC().Format(metav1.RFC3339Micro))
	_, err := cs.CoordinationV1().Leases(name).Patch(ctx, clusterv1.ManagedClusterLeaseName, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	return now, err
}

func (lg *loadGen) stop() {
	lg.cancel()
	lg.done.Wait()
}

func (lg *loadGen) resetStats() {
	lg.ok.Store(0)
	lg.notFound.Store(0)
	lg.failed.Store(0)
	lg.late.Store(0)
	lg.latencyNanos.Store(0)
}

// rate is the renewals per second over elapsed seconds and their mean latency in milliseconds.
func (lg *loadGen) rate(elapsed float64) (perSecond, meanMillis float64) {
	ok := lg.ok.Load()
	if ok == 0 {
		return 0, 0
	}
	return float64(ok) / elapsed, float64(lg.latencyNanos.Load()) / float64(ok) / 1e6
}

func (lg *loadGen) summary() string {
	s := fmt.Sprintf("renewals ok %d, lease not yet there %d, late %d, failed %d", lg.ok.Load(), lg.notFound.Load(), lg.late.Load(), lg.failed.Load())
	if e, ok := lg.lastErr.Load().(string); ok && lg.failed.Load() > 0 {
		s += " (last: " + e + ")"
	}
	return s
}

// probeTaintLatency creates the probe clusters, renews each lease a few times, stops, and
// measures the time from the last renewal until the hub's unreachable taint is seen.
func probeTaintLatency(b *testing.B, pr progress, cl client.Client, cs kubernetes.Interface, expected time.Duration) []time.Duration {
	ctx := context.Background()
	lats := make([]time.Duration, probes)
	errs := make([]error, probes)
	var wg sync.WaitGroup
	for i := range probes {
		wg.Go(func() {
			// Staggered, so that the probes' expiries do not coincide.
			time.Sleep(time.Duration(i) * 2 * time.Second)
			lats[i], errs[i] = probeOne(ctx, pr, cl, cs, fmt.Sprintf("probe-%d", i), expected)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return lats
}

func probeOne(ctx context.Context, pr progress, cl client.Client, cs kubernetes.Interface, name string, expected time.Duration) (time.Duration, error) {
	if err := createCluster(ctx, cl, name, probeLeaseSeconds); err != nil {
		return 0, err
	}
	key := client.ObjectKey{Name: name}
	// The hub creates the lease; the cluster must be Available and untainted before its agent
	// "stops".
	if err := poll(ctx, 2*time.Minute, func() (bool, error) {
		_, err := cs.CoordinationV1().Leases(name).Get(ctx, clusterv1.ManagedClusterLeaseName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		return 0, fmt.Errorf("%s: waiting for its lease: %w", name, err)
	}
	period := time.Duration(probeLeaseSeconds) * time.Second
	var last time.Time
	for k := range probeRenewals {
		if k > 0 {
			time.Sleep(period)
		}
		var err error
		if last, err = renewLease(ctx, cs, name); err != nil {
			return 0, fmt.Errorf("%s: renewing its lease: %w", name, err)
		}
	}
	mc := &clusterv1.ManagedCluster{}
	if err := cl.Get(ctx, key, mc); err != nil {
		return 0, err
	}
	if hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable) || !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
		return 0, fmt.Errorf("%s: not Available and untainted at its last renewal: taints %v, conditions %v", name, mc.Spec.Taints, mc.Status.Conditions)
	}
	pr.printf("%s: last renewal at %s, lease stopped", name, last.Format("15:04:05.000"))
	var seen time.Time
	err := poll(ctx, expected+5*time.Minute, func() (bool, error) {
		if err := cl.Get(ctx, key, mc); err != nil {
			return false, err
		}
		seen = time.Now()
		return hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable), nil
	})
	if err != nil {
		return 0, fmt.Errorf("%s: waiting for the unreachable taint: %w", name, err)
	}
	lat := seen.Sub(last)
	var unknownAt string
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
		unknownAt = fmt.Sprintf("Available=%s at +%.0f s (second precision)", c.Status, c.LastTransitionTime.Sub(last).Seconds())
	}
	pr.printf("%s: unreachable taint seen %.2f s after the last renewal (expected %s, excess %.2f s); %s",
		name, lat.Seconds(), expected, (lat - expected).Seconds(), unknownAt)
	return lat, nil
}

// poll calls cond every 100 ms until it reports true or fails.
func poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// clockTicks is the kernel's clock ticks per second, the unit of CPU times in /proc.
func clockTicks() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && v > 0 {
			return v
		}
	}
	return 100
}

// cpuTicksOf is a process's user plus system CPU time, in clock ticks, from /proc/<pid>/stat.
func cpuTicksOf(b *testing.B, p *localk8s.Process) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
	if err != nil {
		b.Fatalf("%s: %v", p.Name, err)
	}
	// The command name in parentheses may hold spaces; the fields after it start with the state
	// (field 3), so utime and stime (fields 14 and 15) are the 12th and 13th.
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		b.Fatalf("%s: short /proc stat: %q", p.Name, data)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		b.Fatalf("%s: /proc stat: %v", p.Name, err)
	}
	return utime + stime
}

// cpuPercent samples a process's CPU use over d, as a percentage of one core.
func cpuPercent(b *testing.B, p *localk8s.Process, clk int64, d time.Duration) float64 {
	t0, c0 := time.Now(), cpuTicksOf(b, p)
	time.Sleep(d)
	c1 := cpuTicksOf(b, p)
	return float64(c1-c0) / float64(clk) / time.Since(t0).Seconds() * 100
}

// statusBytes reads a size field (VmRSS, VmHWM, ...) of /proc/<pid>/status.
func statusBytes(b *testing.B, p *localk8s.Process, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		b.Fatalf("%s: %v", p.Name, err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("%s: no %s in /proc status", p.Name, field)
	return 0
}

// procSummary is a process's total CPU time and resident memory, for progress lines.
func procSummary(p *localk8s.Process, clk int64) string {
	stat, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
	status, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err1 != nil || err2 != nil {
		return "(gone)"
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	var rssKB int64
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return fmt.Sprintf("CPU %.0f s, RSS %.0f MiB", float64(u+s)/float64(clk), float64(rssKB)/1024)
}

var labelRE = regexp.MustCompile(`(\w+)="([^"]*)"`)

// apiserverRequests reads apiserver_request_total from the API server's /metrics, summed by verb,
// resource and code.
func apiserverRequests(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	s := bufio.NewScanner(strings.NewReader(string(raw)))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line, ok := strings.CutPrefix(s.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for _, m := range labelRE.FindAllStringSubmatch(line[:end], -1) {
			l[m[1]] = m[2]
		}
		res := l["resource"]
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		out[fmt.Sprintf("%-6s %s %s", l["verb"], res, l["code"])] += v
	}
	return out, s.Err()
}

// printRequestDelta prints the API requests served during the window, per second, busiest first:
// the load generator's are the lease PATCHes, nearly all the rest are the hub's.
func printRequestDelta(pr progress, before, after map[string]float64, seconds float64) {
	type row struct {
		key string
		n   float64
	}
	var rows []row
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			rows = append(rows, row{k, d})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.n, a.n) })
	pr.printf("API requests during the window (verb resource code: per second), lease PATCHes are the load generator's:")
	for i, r := range rows {
		if i == 12 {
			break
		}
		pr.printf("  %s: %.2f/s", r.key, r.n/seconds)
	}
}

var controllerRE = regexp.MustCompile(`controller="([^"]+)"`)

// summarizeHubLog prints how many lines the hub logged, its errors by controller and the last
// few, to show which controller was busy or failing without a profile.
func summarizeHubLog(pr progress, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		pr.printf("hub log: %v", err)
		return
	}
	var lines, errs int
	byController := map[string]int{}
	var lastErrs []string
	for line := range strings.Lines(string(data)) {
		lines++
		if !strings.HasPrefix(line, "E") {
			continue
		}
		errs++
		ctrlName := "(none)"
		if m := controllerRE.FindStringSubmatch(line); m != nil {
			ctrlName = m[1]
		}
		byController[ctrlName]++
		if len(line) > 300 {
			line = line[:300] + "..."
		}
		lastErrs = append(lastErrs, strings.TrimSpace(line))
		if len(lastErrs) > 5 {
			lastErrs = lastErrs[1:]
		}
	}
	pr.printf("hub log: %d lines, %d errors %v", lines, errs, byController)
	for _, l := range lastErrs {
		pr.printf("  %s", l)
	}
}
