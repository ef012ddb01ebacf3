//go:build integration

package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/managedserviceaccount"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Parameters of BenchmarkManagedServiceAccountRotation.
const (
	rotationClustersEnv     = "FLOTILLA_BENCH_ROTATION_CLUSTERS"
	defaultRotationClusters = 1000
	// rotationName is each cluster's ManagedServiceAccount: the one the hub's Kueue path makes
	// per worker has this name too.
	rotationName     = "multikueue"
	rotationValidity = time.Hour
)

// BenchmarkManagedServiceAccountRotation measures one rotation of every token in a fleet: N
// clusters (1,000, FLOTILLA_BENCH_ROTATION_CLUSTERS), accepted, their leases renewed, each with
// one ManagedServiceAccount of one hour's validity, served by the real managed-serviceaccount
// add-on (internal/agent/builtin/managedserviceaccount) of each cluster, run in this process
// against one spoke API server (each cluster's ServiceAccounts in a namespace of its own there).
// The hub (`flotilla hub`, a process of its own) and its API server are what is measured.
//
// Once every token is issued and the hub has settled, every agent's clock is stepped forward to
// 80% of the tokens' life (the rotation rule), so that all N tokens fall due at the same moment:
// the worst case (a fleet whose accounts were made together, as the hub's Kueue path makes one
// per worker when it starts) without waiting 48 minutes. The token requests and the writes are
// real; only the agents' sense of time is moved. It reports the time from the step to each token
// rotated on the hub (p50, p99, max with n), the writes per rotation on the hub's API server and
// the spoke's (apiserver_request_total, mutating verbs; the load generator's lease renewals are
// left out), and the hub's CPU and memory during the wave.
//
// `make bench-msa-rotation`; about 2 minutes at 1,000 clusters.
func BenchmarkManagedServiceAccountRotation(b *testing.B) {
	startRecord(b, "bench-msa-rotation")
	if !selected("Rotation") {
		b.Skip("starts a hub and 1,000 agents: select it by name (make bench-msa-rotation)")
	}
	n := sized(b, rotationClustersEnv, defaultRotationClusters, 5)
	param(b, "clusters", n)
	param(b, "validity", rotationValidity.String())
	ctrllog.SetLogger(logr.Discard())
	bins := binaries(b)
	hubBin := buildFlotilla(b)
	for range b.N {
		r := runRotation(b, bins, hubBin, n)
		report(b, float64(n), "clusters")
		reportLatency(b, r.latencies, time.Millisecond, func(stat string) string { return "rotated-" + stat })
		report(b, r.wave.Seconds(), "s-all-rotated")
		report(b, r.hubWrites, "hub-writes/rotation")
		report(b, r.spokeWrites, "spoke-writes/rotation")
		report(b, r.hubCPU, "cpu-%-hub")
		report(b, mib(r.hubAdded), "MiB-rss-hub-added")
		report(b, mib(r.hubRSS), "MiB-rss-hub")
	}
	report(b, 0, "ns/op")
}

type rotationResult struct {
	latencies              []time.Duration
	wave                   time.Duration
	hubWrites, spokeWrites float64
	hubCPU                 float64 // % of one core from the step to the last rotation
	hubAdded, hubRSS       int64
}

func runRotation(b *testing.B, bins localk8s.Binaries, hubBin string, n int) rotationResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr := progress{start: time.Now()}
	pr.printf("one ManagedServiceAccount on each of %d clusters, rotated at once", n)
	dir := b.TempDir()
	hubAPI, spokeAPI, clusters := startAcceptedFleet(ctx, b, pr, bins, dir, n)
	hub := startHubProcess(b, hubBin, hubAPI.Kubeconfig, filepath.Join(dir, "flotilla-hub.log"))
	defer hub.Stop(5 * time.Second)
	lg := startLoadGen(hubAPI.Kube, clusters, 60*time.Second)
	defer lg.stop()
	clk := clockTicks()

	tracker := watchRefreshes(ctx, b, hubAPI.Config)
	if err := parallel(clusters, createWorkers, func(name string) error {
		return hubAPI.Client.Create(ctx, &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: rotationName},
			Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{Enabled: true,
				Validity: metav1.Duration{Duration: rotationValidity}}}})
	}); err != nil {
		b.Fatal(err)
	}
	skew := newSkewClock()
	stopAgents := startMSAAgents(ctx, b, clusters, hubAPI, spokeAPI, skew)
	defer func() { cancel(); stopAgents() }()
	if _, err := tracker.waitAll(ctx, pr, n, time.Time{}, 10*time.Minute); err != nil {
		b.Fatalf("issuing the first tokens: %v", err)
	}
	pr.printf("%d tokens issued; waiting for the hub to settle", n)
	waitSettled(b, pr, hub, clk)

	hubBefore, spokeBefore := requests(ctx, b, hubAPI.Kube), requests(ctx, b, spokeAPI.Kube)
	rssBefore, cpu0 := rss(b, hub), cpuTicksOf(b, hub)
	stepped := time.Now()
	skew.step(time.Duration(float64(rotationValidity)*authv1beta1.TokenRefreshFraction) + time.Minute)
	latencies, err := tracker.waitAll(ctx, pr, n, stepped, 10*time.Minute)
	if err != nil {
		b.Fatalf("rotating: %v (hub log %s)", err, filepath.Join(dir, "flotilla-hub.log"))
	}
	var r rotationResult
	r.latencies, r.wave = latencies, time.Since(stepped)
	r.hubCPU = float64(cpuTicksOf(b, hub)-cpu0) / float64(clk) / r.wave.Seconds() * 100
	r.hubRSS = rss(b, hub)
	r.hubAdded = r.hubRSS - rssBefore
	// What the hub does in answer to the rotations lands just after them.
	time.Sleep(5 * time.Second)
	hubAfter, spokeAfter := requests(ctx, b, hubAPI.Kube), requests(ctx, b, spokeAPI.Kube)
	r.hubWrites = writesBetween(pr, "hub", hubBefore, hubAfter) / float64(n)
	r.spokeWrites = writesBetween(pr, "spoke", spokeBefore, spokeAfter) / float64(n)
	pr.printf("%d tokens rotated in %s (%s); writes per rotation: hub %.2f, spoke %.2f; hub %.1f%% of a core meanwhile, resident %.0f MiB (%+.0f MiB)",
		n, r.wave.Round(100*time.Millisecond), latencySummary(latencies), r.hubWrites, r.spokeWrites, r.hubCPU, mib(r.hubRSS), mib(r.hubAdded))
	summarizeHubLog(pr, filepath.Join(dir, "flotilla-hub.log"))
	return r
}

// startMSAAgents runs the managed-serviceaccount add-on of every cluster in this process, each
// with its ServiceAccounts in the namespace of the cluster's name on the shared spoke and the
// client rate a real agent gives it (registration.DefaultQPS).
func startMSAAgents(ctx context.Context, b *testing.B, clusters []string, hubAPI, spokeAPI *hubAPIServer, clk clock.WithTicker) (wait func()) {
	var wg sync.WaitGroup
	for _, name := range clusters {
		hubCfg, spokeCfg := agentConfig(hubAPI.Config), agentConfig(spokeAPI.Config)
		hubClient, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme, Mapper: hubAPI.Client.RESTMapper()})
		if err != nil {
			b.Fatal(err)
		}
		hubKube, err := kubernetes.NewForConfig(hubCfg)
		if err != nil {
			b.Fatal(err)
		}
		env := builtin.Env{ClusterName: name, Hub: hubClient, HubKube: hubKube, HubConfig: hubCfg, Spoke: spokeCfg, Clock: clk, Log: agentErrorLog(name)}
		wg.Go(func() { _ = managedserviceaccount.AddOn{Namespace: name}.Run(ctx, env) })
	}
	return wg.Wait
}

// agentConfig is cfg as one in-process agent of a benchmark uses it: the client rate a real agent
// has (registration.DefaultQPS) and connections of its own, as a real agent's process has (on
// one shared HTTP/2 connection the API server's 250 streams would hold the agents' watches and
// nothing else).
func agentConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = registration.DefaultQPS, registration.DefaultBurst
	c.Dial = ownDial()
	return c
}

// agentErrorLog prints only a cluster's agent's errors: a benchmark whose agents fail says why.
func agentErrorLog(cluster string) logr.Logger {
	return funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"error"`) {
			fmt.Fprintln(os.Stderr, "agent", cluster, prefix, args)
		}
	}, funcr.Options{})
}

// ownDial is a dialer that keeps client-go from sharing a cached transport between clients.
func ownDial() func(ctx context.Context, network, address string) (net.Conn, error) {
	return (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
}

// refreshTracker follows every ManagedServiceAccount's status.tokenSecretRef.lastRefreshTimestamp
// through one informer, with when each change was seen.
type refreshTracker struct {
	mu sync.Mutex
	// seen is, per namespace/name, when its token was last seen reported, and the refresh.
	seen    map[string]trackedRefresh
	changed chan struct{}
}

type trackedRefresh struct {
	at      time.Time
	refresh metav1.Time
}

func watchRefreshes(ctx context.Context, b *testing.B, cfg *rest.Config) *refreshTracker {
	t := &refreshTracker{seen: map[string]trackedRefresh{}, changed: make(chan struct{})}
	inform(ctx, b, cfg, &authv1beta1.ManagedServiceAccount{}, toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { t.observe(o.(*authv1beta1.ManagedServiceAccount)) },
		UpdateFunc: func(_, o any) { t.observe(o.(*authv1beta1.ManagedServiceAccount)) },
	})
	return t
}

// observe records m's last refresh, and when it was first seen, once its token is reported.
func (t *refreshTracker) observe(m *authv1beta1.ManagedServiceAccount) {
	if m.Status.TokenSecretRef == nil || !meta.IsStatusConditionTrue(m.Status.Conditions, authv1beta1.ConditionTypeTokenReported) {
		return
	}
	key := m.Namespace + "/" + m.Name
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.seen[key]; !ok || !old.refresh.Equal(&m.Status.TokenSecretRef.LastRefreshTimestamp) {
		t.seen[key] = trackedRefresh{at: time.Now(), refresh: m.Status.TokenSecretRef.LastRefreshTimestamp}
		close(t.changed)
		t.changed = make(chan struct{})
	}
}

// waitAll waits until n tokens were reported after since and returns, for each, how long after
// since that was seen.
func (t *refreshTracker) waitAll(ctx context.Context, pr progress, n int, since time.Time, timeout time.Duration) ([]time.Duration, error) {
	deadline := time.After(timeout)
	last := -1
	for {
		t.mu.Lock()
		var ds []time.Duration
		for _, s := range t.seen {
			if s.at.After(since) {
				ds = append(ds, s.at.Sub(since))
			}
		}
		changed := t.changed
		t.mu.Unlock()
		if len(ds)/100 != last/100 || len(ds) == n {
			last = len(ds)
			pr.printf("%d of %d tokens reported", len(ds), n)
		}
		if len(ds) >= n {
			return ds, nil
		}
		select {
		case <-changed:
		case <-deadline:
			return nil, fmt.Errorf("%d of %d tokens reported in %s", len(ds), n, timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// skewClock is the real clock moved forward by an offset that step changes: every After in
// flight is measured against the moved time, as a clock that jumped would be.
type skewClock struct {
	clock.RealClock
	offset atomic.Int64
	mu     sync.Mutex
	jumped chan struct{}
}

func newSkewClock() *skewClock { return &skewClock{jumped: make(chan struct{})} }

func (c *skewClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *skewClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// After fires once the moved time passes now+d.
func (c *skewClock) After(d time.Duration) <-chan time.Time {
	due := c.Now().Add(d)
	ch := make(chan time.Time, 1)
	go func() {
		for {
			c.mu.Lock()
			jumped := c.jumped
			c.mu.Unlock()
			left := due.Sub(c.Now())
			if left <= 0 {
				ch <- c.Now()
				return
			}
			t := time.NewTimer(left)
			select {
			case <-t.C:
			case <-jumped:
				t.Stop()
			}
		}
	}()
	return ch
}

// step moves the clock forward by d.
func (c *skewClock) step(d time.Duration) {
	c.offset.Add(int64(d))
	c.mu.Lock()
	close(c.jumped)
	c.jumped = make(chan struct{})
	c.mu.Unlock()
}
