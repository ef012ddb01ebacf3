//go:build integration

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// buildFlotilla builds the flotilla binary from the checkout, so the hub runs as a process of its
// own and /proc measures it alone.
func buildFlotilla(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "flotilla")
	build := exec.Command("go", "build", "-o", bin, "github.com/flotilla/flotilla/cmd/flotilla")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building flotilla: %v\n%s", err, out)
	}
	return bin
}

// startHubProcess runs `flotilla hub` without leader election, metrics or health probes.
func startHubProcess(b *testing.B, bin, kubeconfig, logFile string) *localk8s.Process {
	return startHubServing(b, bin, kubeconfig, logFile, "0")
}

// hubPprofEnv names an address for the benchmarks' hub to serve /debug/pprof at.
const hubPprofEnv = "FLOTILLA_BENCH_HUB_PPROF"

// startHubServing runs `flotilla hub` without leader election or health probes, serving its metrics on
// metricsAddress ("0": none).
//
// With hubPprofEnv set to an address, the hub serves Go's /debug/pprof there, for a person to
// profile it while the benchmark runs (`go tool pprof -top bin/flotilla
// http://ADDRESS/debug/pprof/profile?seconds=30`).
func startHubServing(b *testing.B, bin, kubeconfig, logFile, metricsAddress string) *localk8s.Process {
	args := []string{
		"hub", "--kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address", metricsAddress, "--health-probe-bind-address", "0",
	}
	if addr := os.Getenv(hubPprofEnv); addr != "" {
		args = append(args, "--pprof-bind-address", addr)
	}
	hub, err := localk8s.StartProcess("hub/flotilla-hub", bin, args, logFile, false)
	if err != nil {
		b.Fatal(err)
	}
	return hub
}

// createPlacementFleet makes the benchmark's fleet: N clusters in set "bench" (by the
// ExclusiveClusterSetLabel), reported Available with some allocatable CPU, each with the
// AddOnPlacementScore "demo" (score "demo" 80) in a namespace of its name, and the set bound into
// the namespace "bench". The clusters are not accepted: no agent runs, and the hub has nothing to
// grant them (placement does not ask); createAcceptedFleet makes them accepted.
func createPlacementFleet(ctx context.Context, pr progress, cl client.Client, n int) error {
	return createFleet(ctx, pr, cl, n, false)
}

// createAcceptedFleet is createPlacementFleet with every cluster accepted by the hub
// (spec.hubAcceptsClient) and reported Joined, as a real accepted cluster is: the hub delivers
// add-ons and works only to accepted clusters (internal/hub/delivery). Their leases must then be
// renewed (startLoadGen), or the hub marks them unreachable.
func createAcceptedFleet(ctx context.Context, pr progress, cl client.Client, n int) error {
	return createFleet(ctx, pr, cl, n, true)
}

func createFleet(ctx context.Context, pr progress, cl client.Client, n int, accepted bool) error {
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}},
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: benchSet}, Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel},
		}},
		&clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: benchSet},
			Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: benchSet},
		},
	} {
		if err := cl.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	names := clusterNames(n)
	start := time.Now()
	var done atomic.Int64
	return parallel(names, createWorkers, func(name string) error {
		i, _ := strconv.Atoi(name[len("cluster-"):])
		if err := createBenchCluster(ctx, cl, name, i, accepted); err != nil {
			return err
		}
		if k := done.Add(1); k%1000 == 0 || int(k) == n {
			pr.printf("created %d/%d clusters with their scores (%.0f/s)", k, n, float64(k)/time.Since(start).Seconds())
		}
		return nil
	})
}

// clusterNames are the names createFleet gives n clusters.
func clusterNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%05d", i)
	}
	return names
}

// startAcceptedFleet starts a hub API server and a spoke API server under dir and makes n
// accepted clusters on the hub (createAcceptedFleet); it returns both servers and the clusters'
// names.
func startAcceptedFleet(ctx context.Context, b *testing.B, pr progress, bins localk8s.Binaries, dir string, n int) (hub, spoke *hubAPIServer, clusters []string) {
	hub = startHubAPIServer(b, bins, filepath.Join(dir, "hub"))
	spoke = startHubAPIServer(b, bins, filepath.Join(dir, "spoke"))
	if err := createAcceptedFleet(ctx, pr, hub.Client, n); err != nil {
		b.Fatal(err)
	}
	return hub, spoke, clusterNames(n)
}

func createBenchCluster(ctx context.Context, cl client.Client, name string, i int, accepted bool) error {
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: benchSet}},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted, LeaseDurationSeconds: 60},
	}
	if err := cl.Create(ctx, mc); err != nil {
		return fmt.Errorf("creating ManagedCluster %s: %w", name, err)
	}
	mc.Status.Allocatable = clusterv1.ResourceList{
		"cpu": quantity(strconv.Itoa(16 + i%48)), "memory": quantity("256Gi"),
	}
	mc.Status.Capacity = mc.Status.Allocatable
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable",
		Message: "simulated (placement benchmark)",
	})
	if accepted {
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
			Message: "simulated agent (add-on benchmark)",
		})
	}
	if err := cl.Status().Update(ctx, mc); err != nil {
		return fmt.Errorf("reporting ManagedCluster %s Available: %w", name, err)
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	score := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "demo"}}
	if err := cl.Create(ctx, score); err != nil {
		return fmt.Errorf("creating AddOnPlacementScore %s/demo: %w", name, err)
	}
	score.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "demo", Value: 80}}
	if err := cl.Status().Update(ctx, score); err != nil {
		return fmt.Errorf("scoring AddOnPlacementScore %s/demo: %w", name, err)
	}
	return nil
}

// decisionTracker follows the PlacementDecisions of a namespace through one watch.
type decisionTracker struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	// byName holds each PlacementDecision's placement and clusters.
	byName map[string]trackedDecision
	// changed closes at the next event.
	changed chan struct{}
	err     error
}

type trackedDecision struct {
	placement string
	clusters  []string
	seen      time.Time
}

func watchDecisions(ctx context.Context, cl client.WithWatch, ns string) (*decisionTracker, error) {
	ctx, cancel := context.WithCancel(ctx)
	w, err := cl.Watch(ctx, &clusterv1beta1.PlacementDecisionList{}, client.InNamespace(ns))
	if err != nil {
		cancel()
		return nil, err
	}
	t := &decisionTracker{cancel: cancel, byName: map[string]trackedDecision{}, changed: make(chan struct{})}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			now := time.Now()
			t.mu.Lock()
			switch d, ok := ev.Object.(*clusterv1beta1.PlacementDecision); {
			case ev.Type == watch.Error || !ok:
				t.err = fmt.Errorf("watching PlacementDecisions: %v", ev.Object)
			case ev.Type == watch.Deleted:
				delete(t.byName, d.Name)
			default:
				td := trackedDecision{placement: d.Labels[clusterv1beta1.PlacementLabel], seen: now}
				for _, c := range d.Status.Decisions {
					td.clusters = append(td.clusters, c.ClusterName)
				}
				t.byName[d.Name] = td
			}
			close(t.changed)
			t.changed = make(chan struct{})
			t.mu.Unlock()
		}
		t.mu.Lock()
		if ctx.Err() == nil && t.err == nil {
			t.err = fmt.Errorf("the PlacementDecision watch closed")
		}
		t.mu.Unlock()
	}()
	return t, nil
}

func (t *decisionTracker) stop() { t.cancel() }

// counts returns how many placements have PlacementDecisions, and how many hold want clusters.
func (t *decisionTracker) counts(want int) (exist, filled int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	byPlacement := map[string]int{}
	for _, d := range t.byName {
		byPlacement[d.placement] += len(d.clusters)
	}
	for _, n := range byPlacement {
		exist++
		if n >= want {
			filled++
		}
	}
	return exist, filled
}

// waitUntil waits until cond, called under the tracker's lock after every event, reports true,
// and returns the time of the event that made it true.
func (t *decisionTracker) waitUntil(timeout time.Duration, cond func(byName map[string]trackedDecision) (time.Time, bool)) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		t.mu.Lock()
		if t.err != nil {
			t.mu.Unlock()
			return time.Time{}, t.err
		}
		at, ok := cond(t.byName)
		ch := t.changed
		t.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return time.Time{}, fmt.Errorf("timed out after %s", timeout)
		}
	}
}

// measureChangeLatency creates a probe placement that selects the clusters labeled
// bench-probe=yes, then labels one cluster at a time and times the label patch until the probe's
// PlacementDecisions hold that cluster. Every cluster is in the set all P placements use, so
// each change re-evaluates every placement.
func measureChangeLatency(b *testing.B, pr progress, cl client.Client, tr *decisionTracker, samples int) []time.Duration {
	ctx := context.Background()
	probe := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: "probe"},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{"bench-probe": "yes"},
			}},
		}}},
	}
	if err := cl.Create(ctx, probe); err != nil {
		b.Fatal(err)
	}
	holds := func(cluster string) func(map[string]trackedDecision) (time.Time, bool) {
		return func(byName map[string]trackedDecision) (time.Time, bool) {
			for _, d := range byName {
				if d.placement == probe.Name && (cluster == "" || slices.Contains(d.clusters, cluster)) {
					return d.seen, true
				}
			}
			return time.Time{}, false
		}
	}
	// OCM's controller, rescheduling every placement on each change, takes minutes at 10,000
	// clusters: the waits are long enough for it, and a wait that ends is a failure.
	if _, err := tr.waitUntil(10*time.Minute, holds("")); err != nil {
		b.Fatalf("the probe placement's PlacementDecision: %v", err)
	}
	pr.printf("timing %d single-cluster label changes with %d placements bound", samples, 1000)
	var out []time.Duration
	for i := range samples {
		name := fmt.Sprintf("cluster-%05d", i*2) // spread over the fleet
		patch := []byte(`{"metadata":{"labels":{"bench-probe":"yes"}}}`)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		sent := time.Now()
		if err := cl.Patch(ctx, mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
			b.Fatal(err)
		}
		at, err := tr.waitUntil(10*time.Minute, holds(name))
		if err != nil {
			b.Fatalf("label change on %s: %v", name, err)
		}
		out = append(out, at.Sub(sent))
		if (i+1)%50 == 0 {
			pr.printf("%d/%d changes: %s", i+1, samples, latencySummary(out))
		}
		time.Sleep(100 * time.Millisecond) // let the other placements' re-evaluation finish
	}
	return out
}
