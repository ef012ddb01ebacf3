//go:build integration

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/go-logr/logr"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/bench/floor"
	"github.com/flotilla/flotilla/bench/record"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Parameters of BenchmarkPlacementAtScale.
const (
	// placementSizesEnv lists the sizes to run, as PxN (placements x clusters), comma separated.
	placementSizesEnv     = "FLOTILLA_BENCH_PLACEMENT_SIZES"
	defaultPlacementSizes = "1000x1000,10000x1000,1000x10000"
	// perfEnv names a file for a `perf record` of the hub during the timed run (needs perf).
	perfEnv = "FLOTILLA_BENCH_PERF"
	// latencySamplesEnv sets how many single-cluster label changes are timed (at P = 1000).
	latencySamplesEnv     = "FLOTILLA_BENCH_LATENCY_SAMPLES"
	defaultLatencySamples = 200
	// peerLatencySamplesEnv sets how many label changes OCM's controller is timed on.
	peerLatencySamplesEnv     = "FLOTILLA_BENCH_PEER_LATENCY_SAMPLES"
	defaultPeerLatencySamples = 20

	benchNamespace = "bench"
	// floorNamespace holds the write-floor probe's placements, after the hub's run.
	floorNamespace = "floor"
	benchSet       = "bench"
	// perPlacement is every placement's numberOfClusters, as in OCM's benchmark.
	perPlacement = 10
)

// BenchmarkPlacementAtScale runs the real `flotilla hub` against one kube-apiserver with OCM's
// placement benchmark's shape: one set of N clusters, each with an AddOnPlacementScore "demo"
// whose score "demo" is 80, bound into one namespace; P placements with numberOfClusters 10, mode
// Exact and the prioritizers AddOn demo/demo, ResourceAllocatableCPU and Balance, weight 1 each,
// created while the scheduler runs. It reports the time from the hub's start until P
// PlacementDecisions exist (and until each holds its clusters), the hub's resident memory, at
// P = 1000 the latency of one cluster's label change, and the write floor of the same API server
// measured right after (placementWrites: the P placements' four writes each, without the hub),
// with the hub's time as a multiple of it (x-write-floor), so that a figure from this 2-core
// machine compares with one from a larger server.
//
// It takes several minutes, so `-bench .` (make bench) skips it: `make bench-placement`.
func BenchmarkPlacementAtScale(b *testing.B) {
	rec := startRecord(b, "bench-placement")
	if !selected("Placement") {
		b.Skip("runs for several minutes: select it by name (make bench-placement)")
	}
	def := defaultPlacementSizes
	if smoke() {
		def = "5x10"
	}
	sizes, err := parseSizes(cmpOr(os.Getenv(placementSizesEnv), def))
	if err != nil {
		b.Fatalf("%s: %v", placementSizesEnv, err)
	}
	samples := defaultLatencySamples
	if smoke() {
		samples = 3
	}
	if v := os.Getenv(latencySamplesEnv); v != "" {
		if samples, err = strconv.Atoi(v); err != nil || samples < 1 {
			b.Fatalf("%s=%q: want a positive number", latencySamplesEnv, v)
		}
	}
	param(b, "sizes", cmpOr(os.Getenv(placementSizesEnv), def))
	param(b, "latencySamples", samples)
	// OCM's controller takes seconds per change with 1,000 placements bound (it schedules every
	// placement again), so it gets fewer: enough for a p50 and a maximum, too few for a p99.
	peerSamples := min(samples, defaultPeerLatencySamples)
	if v := os.Getenv(peerLatencySamplesEnv); v != "" {
		if peerSamples, err = strconv.Atoi(v); err != nil || peerSamples < 1 {
			b.Fatalf("%s=%q: want a positive number", peerLatencySamplesEnv, v)
		}
	}
	ctrllog.SetLogger(logr.Discard()) // the benchmark's clients log nothing worth reading
	bins := binaries(b)
	hubBin := buildFlotilla(b)
	peer := ocmPlacementPeer(b)
	sides := []record.Side{record.Flotilla}
	if peer.bin != "" {
		sides = append(sides, record.Peer)
		rec.Peer = peer.describe()
	}
	for _, sz := range sizes {
		b.Run(fmt.Sprintf("%dx%d", sz.placements, sz.clusters), func(b *testing.B) {
			// Each round runs every side once, alternating, so that a machine that slows down
			// during the run slows both.
			for range b.N {
				for _, side := range sides {
					n := samples
					if side == record.Peer {
						n = peerSamples
					}
					r := runPlacementAtScale(b, bins, hubBin, peer, side, sz, n)
					reportPlacement(b, side, r)
				}
			}
			report(b, 0, "ns/op")
		})
	}
}

// reportPlacement reports one run's figures for side.
func reportPlacement(b *testing.B, side record.Side, r placementResult) {
	tag := string(side)
	reportSide(b, side, tag, "s-decisions-exist", r.exist.Seconds(), 1)
	reportSide(b, side, tag, "s-decisions-filled", r.filled.Seconds(), 1)
	reportSide(b, side, tag, "s-write-floor", r.floor.Seconds(), 1)
	reportSide(b, side, tag, "x-write-floor", r.filled.Seconds()/r.floor.Seconds(), 1)
	reportSide(b, side, tag, "s-own-writes-floor", r.ownFloor.Seconds(), 1)
	reportSide(b, side, tag, "x-own-writes-floor", r.filled.Seconds()/r.ownFloor.Seconds(), 1)
	reportSide(b, side, tag, "writes/placement", r.writesPerPlacement, 1)
	reportSide(b, side, tag, "MiB-rss", mib(r.hubRSS), 1)
	reportSide(b, side, tag, "MiB-rss-peak", mib(r.hubPeakRSS), 1)
	reportSide(b, side, tag, "s-cpu", r.hubCPU.Seconds(), 1)
	reportLatencySide(b, side, r.latencies, time.Millisecond, func(stat string) string { return "change-" + stat })
}

type size struct{ placements, clusters int }

func parseSizes(s string) ([]size, error) {
	var out []size
	for _, f := range strings.Split(s, ",") {
		ps, ns, ok := strings.Cut(strings.TrimSpace(f), "x")
		p, err1 := strconv.Atoi(ps)
		n, err2 := strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil || p < 1 || n < 1 {
			return nil, fmt.Errorf("%q: want PxN, for example 1000x1000", f)
		}
		out = append(out, size{p, n})
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type placementResult struct {
	exist, filled time.Duration // from the hub's start
	// floor is how long the same API server takes, at the rates probed right after, for the
	// placements' four writes each: filled/floor is how close the side came to it.
	floor time.Duration
	// ownFloor is how long the writes this side made during the run (from the API server's
	// request counts) take at the rates the floor probe measured right after (bench/floor).
	ownFloor           time.Duration
	writesPerPlacement float64
	hubCPU             time.Duration // the hub's CPU time from its start until filled
	hubRSS, hubPeakRSS int64
	latencies          []time.Duration
}

// runPlacementAtScale runs one side on a fresh API server: the Flotilla hub, or (record.Peer)
// OCM's placement controller, after the same set-up run of the Flotilla hub (the clusters'
// registration writes, which are not placement's work).
func runPlacementAtScale(b *testing.B, bins localk8s.Binaries, hubBin string, peer ocmPlacement, side record.Side, sz size, samples int) placementResult {
	ctx := context.Background()
	pr := progress{start: time.Now()}
	pr.printf("%s: %d placements x %d clusters", side, sz.placements, sz.clusters)
	dir := b.TempDir()
	api := startHubAPIServer(b, bins, dir)
	c, cl, cs := api.Cluster, api.Client, api.Kube
	clk := clockTicks()

	// The fleet, and a first run of the hub to set it up (the registration controllers' writes
	// for new clusters), so that the timed run below does placement work only.
	if err := createPlacementFleet(ctx, pr, cl, sz.clusters); err != nil {
		b.Fatal(err)
	}
	hubLog := filepath.Join(dir, "hub", "logs", "flotilla-hub.log")
	hub, _ := startHub(b, hubBin, c, hubLog+".setup")
	waitSettled(b, pr, hub, clk)
	hub.Stop(5 * time.Second)
	pr.printf("fleet set up; the hub stopped")
	if side == record.Peer {
		// Without the Flotilla hub, nothing serves the webhook it registered: the peer's run
		// writes clusters (the label changes) that its failurePolicy would refuse.
		if err := removeHubWebhook(ctx, cs); err != nil {
			b.Fatal(err)
		}
	}

	// The timed run: watch the PlacementDecisions, start the hub, create the placements.
	tr, err := watchDecisions(ctx, cl, benchNamespace)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.stop()
	reqs0 := requests(ctx, b, cs)
	start := time.Now()
	if side == record.Peer {
		hub = peer.start(b, c.Kubeconfig, dir)
		defer hub.Stop(5 * time.Second)
	} else {
		hub, hubLog = startHub(b, hubBin, c, hubLog)
		defer func() {
			hub.Stop(5 * time.Second)
			summarizeHubLog(pr, hubLog)
		}()
	}
	cpu0 := cpuTicksOf(b, hub)
	if out := os.Getenv(perfEnv); out != "" {
		perf := exec.Command("perf", "record", "-F", "499", "-g", "-o", out, "-p", strconv.Itoa(hub.PID()))
		if err := perf.Start(); err != nil {
			b.Fatalf("%s: %v", perfEnv, err)
		}
		defer func() {
			_ = perf.Process.Signal(os.Interrupt)
			_ = perf.Wait()
			pr.printf("perf profile of the hub in %s", out)
		}()
	}
	names := placementNames(sz.placements)
	created := make(chan error, 1)
	go func() {
		created <- parallel(names, createWorkers, func(name string) error {
			return cl.Create(ctx, benchPlacement(name))
		})
		pr.printf("created %d placements in %.1f s", len(names), time.Since(start).Seconds())
	}()
	want := min(perPlacement, sz.clusters)
	var r placementResult
	var lastPrint time.Duration
	for r.filled == 0 {
		select {
		case err := <-created:
			if err != nil {
				b.Fatal(err)
			}
		case <-time.After(100 * time.Millisecond): // the times below are this fine
		}
		if err := hub.ExitError(); err != nil {
			b.Fatal(err)
		}
		exist, filled := tr.counts(want)
		now := time.Since(start)
		if r.exist == 0 && exist >= sz.placements {
			r.exist = now
		}
		if filled >= sz.placements {
			r.filled = now
		}
		if now-lastPrint >= time.Second || r.filled != 0 {
			lastPrint = now
			pr.printf("PlacementDecisions: %d exist, %d hold %d clusters (of %d); %s %s", exist, filled, want, sz.placements, side, procSummary(hub, clk))
		}
		if now > 30*time.Minute {
			b.Fatalf("timed out: %d of %d placements have their decisions", filled, sz.placements)
		}
	}
	r.hubCPU = time.Duration(float64(cpuTicksOf(b, hub)-cpu0) / float64(clk) * float64(time.Second))
	r.hubRSS, r.hubPeakRSS = rss(b, hub), statusBytes(b, hub, "VmHWM")
	pr.printf("%s %d x %d: PlacementDecisions exist after %.2f s, hold their clusters after %.2f s; CPU %.1f s, RSS %.0f MiB (peak %.0f MiB)",
		side, sz.placements, sz.clusters, r.exist.Seconds(), r.filled.Seconds(), r.hubCPU.Seconds(), mib(r.hubRSS), mib(r.hubPeakRSS))
	reqs1 := requests(ctx, b, cs)
	printRequestDelta(pr, reqs0, reqs1, r.filled.Seconds())
	made, rest := writesMade(reqs0, reqs1, placementFloorTargets())
	pr.printf("writes of the placement path: %s; other writes in the window, left out of its floor: %s", made, rest)
	r.writesPerPlacement = made.Total() / float64(sz.placements)
	if (sz.placements == 1000 || smoke()) && sz.clusters >= 2*samples {
		r.latencies = measureChangeLatency(b, pr, cl, tr, samples)
		pr.printf("single-cluster label change to decisions updated: %s", latencySummary(r.latencies))
		r.hubRSS, r.hubPeakRSS = rss(b, hub), statusBytes(b, hub, "VmHWM")
	}
	// The write floor of this run, on the same API server, with the controller stopped so that
	// it neither competes nor reconciles the probe's objects: the rates of each kind of write
	// (bench/floor), and at those rates the four writes per placement any controller makes (the
	// placement's create, its decision's create and status, the placement's status: the
	// floor both sides are compared with) and the writes this side made.
	hub.Stop(5 * time.Second)
	rates, err := probeFloor(ctx, api, placementFloorTargets())
	if err != nil {
		b.Fatal(err)
	}
	p := float64(sz.placements)
	floorSeconds, _ := ownFloor(rates, floor.Writes{{Verb: "POST", Resource: "placements"}: p, {Verb: "POST", Resource: "placementdecisions"}: p,
		{Verb: "PUT", Resource: "placementdecisions/status"}: p, {Verb: "PATCH", Resource: "placements/status"}: p})
	r.floor = time.Duration(floorSeconds * float64(time.Second))
	own, note := ownFloor(rates, made)
	r.ownFloor = time.Duration(own * float64(time.Second))
	pr.printf("floor probe: %s; the %d placements' four writes each take %.2f s at those rates, and the %s run took %.2fx that; its own %.0f writes (%.1f per placement: %s) take %.2f s, and it took %.2fx that%s",
		rates, sz.placements, floorSeconds, side, r.filled.Seconds()/floorSeconds, made.Total(), r.writesPerPlacement, made, own, r.filled.Seconds()/own, note)
	return r
}

// placementNames are the names of n benchmark placements.
func placementNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("placement-%05d", i)
	}
	return names
}

// benchPlacement is OCM's benchmark placement: 10 clusters, Exact, three prioritizers.
func benchPlacement(name string) *clusterv1beta1.Placement {
	one := int32(1)
	n := int32(perPlacement)
	return &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name},
		Spec: clusterv1beta1.PlacementSpec{
			NumberOfClusters: &n,
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
				Mode: clusterv1beta1.PrioritizerPolicyModeExact,
				Configurations: []clusterv1beta1.PrioritizerConfig{
					{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
						AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "demo"}}, Weight: &one},
					{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: "ResourceAllocatableCPU"}, Weight: &one},
					{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: "Balance"}, Weight: &one},
				},
			},
		},
	}
}

// waitSettled waits until the hub's CPU stays under 5% of a core for two 2-second samples.
func waitSettled(b *testing.B, pr progress, hub *localk8s.Process, clk int64) {
	calm := 0
	err := wait.PollUntilContextTimeout(context.Background(), 0, 20*time.Minute, true, func(context.Context) (bool, error) {
		pct := cpuPercent(b, hub, clk, 2*time.Second)
		if err := hub.ExitError(); err != nil {
			return false, err
		}
		if pct < 5 {
			calm++
		} else {
			calm = 0
		}
		pr.printf("setting up: hub %.0f%% of a core", pct)
		return calm >= 2, nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// quantity is a resource quantity for the clusters' allocatable resources.
func quantity(s string) resource.Quantity { return resource.MustParse(s) }
