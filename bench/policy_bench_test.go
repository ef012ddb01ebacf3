//go:build integration

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/bench/record"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	policyClustersEnv = "FLOTILLA_BENCH_POLICY_CLUSTERS"
	policiesEnv       = "FLOTILLA_BENCH_POLICIES"
	// ocmPropagatorVersion is the release tools/build-ocm-propagator.sh builds.
	ocmPropagatorVersion = "v0.19.0"
)

// BenchmarkPolicyPropagation measures the propagation of P root policies to N clusters
// (governance API, issue 35), Flotilla's propagator against OCM's released
// governance-policy-propagator run against the same kind of hub in the same run: each side gets
// a fresh hub API server with the same N accepted clusters, the Flotilla hub (for the peer with
// --no-policy-propagator, so that it only schedules the placement) and one Placement of every
// cluster. Measured: creating P policies and one PlacementBinding of them to all P×N replicated
// policies existing; then, on a settled propagator, one policy edited to its N copies updated,
// and all P edited to every copy updated; the propagating process's CPU and peak memory, and the hub API server's writes per
// replicated policy. Copies are followed by a metadata-only informer of the benchmark's own.
//
// It takes minutes, so `-bench .` skips it: `make bench-policy`.
func BenchmarkPolicyPropagation(b *testing.B) {
	rec := startRecord(b, "bench-policy")
	if !selected("Policy") {
		b.Skip("runs for minutes: select it by name (make bench-policy)")
	}
	n := sized(b, policyClustersEnv, 1000, 5)
	p := sized(b, policiesEnv, 100, 2)
	param(b, "clusters", n)
	param(b, "policies", p)
	rec.Peer = "OCM's governance-policy-propagator " + ocmPropagatorVersion + " (the released module, unchanged, built by tools/build-ocm-propagator.sh; " +
		"its defaults: client 200 requests/s, burst 400, root and replicated policy concurrency 2 and 10), beside the Flotilla hub run with --no-policy-propagator"
	ctrllog.SetLogger(logr.Discard())
	bins := binaries(b)
	hubBin := buildFlotilla(b)
	ocm := buildOCMPropagator(b)
	for range b.N {
		for _, side := range []record.Side{record.Flotilla, record.Peer} {
			r := runPolicyPropagation(b, bins, hubBin, ocm, side, n, p)
			tag := string(side)
			reportSide(b, side, tag, "s-initial", r.initial.Seconds(), 1)
			reportSide(b, side, tag, "s-one-edit", r.oneEdit.Seconds(), 1)
			reportSide(b, side, tag, "s-all-edits", r.allEdits.Seconds(), 1)
			reportSide(b, side, tag, "writes/copy", r.writesPerCopy, p*n)
			reportSide(b, side, tag, "cpu-%-propagator", r.cpu, 1)
			reportSide(b, side, tag, "MiB-rss-propagator-peak", mib(r.peak), 1)
		}
	}
	report(b, 0, "ns/op")
}

// buildOCMPropagator builds (or finds in the cache) OCM's propagator and returns its folder.
func buildOCMPropagator(b *testing.B) string {
	out, err := exec.Command("../tools/build-ocm-propagator.sh").Output()
	if err != nil {
		b.Fatalf("tools/build-ocm-propagator.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

type policyResult struct {
	initial, oneEdit, allEdits time.Duration
	writesPerCopy              float64
	cpu                        float64
	peak                       int64
}

func runPolicyPropagation(b *testing.B, bins localk8s.Binaries, hubBin, ocm string, side record.Side, n, p int) policyResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr := progress{start: time.Now()}
	pr.printf("%s: %d policies on %d clusters", side, p, n)
	dir := b.TempDir()
	hubAPI, _, _ := startAcceptedFleet(ctx, b, pr, bins, dir, n)
	var propagator *localk8s.Process
	hub := startHubServingArgs(b, hubBin, hubAPI.Kubeconfig, filepath.Join(dir, "flotilla-hub.log"), side == record.Peer)
	defer hub.Stop(5 * time.Second)
	propagator = hub
	if side == record.Peer {
		propagator = startOCMPropagator(ctx, b, ocm, hubAPI, filepath.Join(dir, "ocm-propagator.log"))
		defer propagator.Stop(5 * time.Second)
	}
	clk := clockTicks()
	waitSettled(b, pr, hub, clk) // the hub's registration of the clusters is not the propagators' work
	placeAll(ctx, b, pr, hubAPI, n)
	copies := trackCopies(ctx, b, hubAPI)
	before := requests(ctx, b, hubAPI.Kube)
	cpu0 := cpuTicksOf(b, propagator)
	t0 := time.Now()

	var r policyResult
	names := make([]string, p)
	for i := range names {
		names[i] = fmt.Sprintf("bench-policy-%03d", i)
	}
	if err := parallel(names, createWorkers, func(name string) error {
		return hubAPI.Client.Create(ctx, benchPolicy(name))
	}); err != nil {
		b.Fatal(err)
	}
	binding := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: "all"},
		PlacementRef: policyv1.PlacementSubject{APIGroup: clusterv1beta1.GroupVersion.Group, Kind: "Placement", Name: "all"}}
	for _, name := range names {
		binding.Subjects = append(binding.Subjects, policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: name})
	}
	if err := hubAPI.Client.Create(ctx, binding); err != nil {
		b.Fatal(err)
	}
	waitFor(b, pr, fmt.Sprintf("%d replicated policies", p*n), 20*time.Minute, func() (bool, string) {
		c := copies.count(func(string, int64) bool { return true })
		return c == p*n, fmt.Sprintf("%d of %d; %s %s", c, p*n, propagator.Name, procSummary(propagator, clk))
	})
	r.initial = time.Since(t0)
	pr.printf("%s: %d copies in %s", side, p*n, r.initial.Round(time.Millisecond))

	edit := func(name string) {
		pol := &policyv1.Policy{}
		if err := hubAPI.Client.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: name}, pol); err != nil {
			b.Fatal(err)
		}
		pol.Spec.RemediationAction = policyv1.Enforce
		if err := hubAPI.Client.Update(ctx, pol); err != nil {
			b.Fatal(err)
		}
	}
	// An edit is measured on a settled hub: the copies' creation leaves work behind (the copies'
	// own events, the roots' status), as it would on any hub, and a user's edit comes later.
	waitSettled(b, pr, propagator, clk)
	first := benchNamespace + "." + names[0]
	t1 := time.Now()
	edit(names[0])
	waitFor(b, pr, "the edited policy's copies", 10*time.Minute, func() (bool, string) {
		c := copies.count(func(root string, gen int64) bool { return root == first && gen >= 2 })
		return c == n, fmt.Sprintf("%d of %d", c, n)
	})
	r.oneEdit = time.Since(t1)
	pr.printf("%s: one policy's %d copies updated in %s", side, n, r.oneEdit.Round(time.Millisecond))

	waitSettled(b, pr, propagator, clk)
	t2 := time.Now()
	if err := parallel(names[1:], createWorkers, func(name string) error { edit(name); return nil }); err != nil {
		b.Fatal(err)
	}
	waitFor(b, pr, "every copy updated", 20*time.Minute, func() (bool, string) {
		c := copies.count(func(_ string, gen int64) bool { return gen >= 2 })
		return c == p*n, fmt.Sprintf("%d of %d; %s %s", c, p*n, propagator.Name, procSummary(propagator, clk))
	})
	r.allEdits = time.Since(t2)
	elapsed := time.Since(t0)
	r.cpu = float64(cpuTicksOf(b, propagator)-cpu0) / float64(clk) / elapsed.Seconds() * 100
	r.peak = statusBytes(b, propagator, "VmHWM")
	after := requests(ctx, b, hubAPI.Kube)
	writesBetween(pr, "hub", before, after)
	r.writesPerCopy = writesOf(before, after, "policies", "policies/status", "events") / float64(p*n)
	pr.printf("%s: all %d policies edited, every copy updated in %s; %s CPU %.0f%%, peak %.0f MiB, %.2f hub writes per copy",
		side, p, r.allEdits.Round(time.Millisecond), propagator.Name, r.cpu, mib(r.peak), r.writesPerCopy)
	return r
}

// placeAll makes Placement "all" of the bench namespace and waits until it decides the n clusters.
func placeAll(ctx context.Context, b *testing.B, pr progress, hubAPI *hubAPIServer, n int) {
	pl := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: "all"},
		Spec: clusterv1beta1.PlacementSpec{Tolerations: testenv.NoAgentTolerations()}}
	if err := hubAPI.Client.Create(ctx, pl); err != nil {
		b.Fatal(err)
	}
	waitFor(b, pr, "the placement to decide every cluster", 10*time.Minute, func() (bool, string) {
		got := &clusterv1beta1.Placement{}
		if err := hubAPI.Client.Get(ctx, client.ObjectKeyFromObject(pl), got); err != nil {
			return false, err.Error()
		}
		return int(got.Status.NumberOfSelectedClusters) == n, fmt.Sprintf("%d selected", got.Status.NumberOfSelectedClusters)
	})
}

// benchPolicy is a policy of one ConfigurationPolicy (a namespace the clusters must have).
func benchPolicy(name string) *policyv1.Policy {
	def := fmt.Sprintf(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":%q},`+
		`"spec":{"remediationAction":"inform","severity":"low","object-templates":[{"complianceType":"musthave",`+
		`"objectDefinition":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}}]}}`, name)
	return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name}, Spec: policyv1.PolicySpec{
		RemediationAction: policyv1.Inform,
		PolicyTemplates:   []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(def)}}}}}
}

// startHubServingArgs is startHubServing, with the policy propagator off when noPropagator.
func startHubServingArgs(b *testing.B, bin, kubeconfig, logFile string, noPropagator bool) *localk8s.Process {
	args := []string{"hub", "--kubeconfig", kubeconfig, "--leader-elect=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}
	if noPropagator {
		args = append(args, "--no-policy-propagator")
	}
	hub, err := localk8s.StartProcess("hub/flotilla-hub", bin, args, logFile, false)
	if err != nil {
		b.Fatal(err)
	}
	return hub
}

// startOCMPropagator installs the CRD OCM's propagator needs beyond Flotilla's (PolicyAutomation)
// and runs it against the hub with its defaults, cluster-wide, without leader election or
// webhooks (the hub's API server calls none).
func startOCMPropagator(ctx context.Context, b *testing.B, dir string, hubAPI *hubAPIServer, logFile string) *localk8s.Process {
	crds, err := install.ReadCRDs(filepath.Join(dir, "crds"), "*.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := install.CRDs(ctx, hubAPI.Config, crds, install.Options{}); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "KUBECONFIG="+hubAPI.Kubeconfig, "WATCH_NAMESPACE=")
	p, err := localk8s.StartProcessWith(localk8s.ProcessOptions{Name: "ocm-propagator", Binary: filepath.Join(dir, "governance-policy-propagator"),
		Args: []string{"--leader-elect=false", "--enable-webhooks=false", "--disable-placementrule=true",
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", freePort(b)), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", freePort(b))},
		LogPath: logFile, Env: env})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// copyTracker follows the replicated policies (label root-policy) by metadata: each one's root
// and generation.
type copyTracker struct {
	mu  sync.Mutex
	gen map[string]copyState
}

type copyState struct {
	root string
	gen  int64
}

func trackCopies(ctx context.Context, b *testing.B, hubAPI *hubAPIServer) *copyTracker {
	t := &copyTracker{gen: map[string]copyState{}}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(policyv1.GroupVersion.WithKind("Policy"))
	set := func(o any) {
		m, ok := o.(*metav1.PartialObjectMetadata)
		if !ok {
			return
		}
		root := m.Labels[policyv1.RootPolicyLabel]
		if root == "" {
			return
		}
		t.mu.Lock()
		t.gen[m.Namespace+"/"+m.Name] = copyState{root: root, gen: m.Generation}
		t.mu.Unlock()
	}
	inform(ctx, b, hubAPI.Config, obj, toolscache.ResourceEventHandlerFuncs{
		AddFunc: set, UpdateFunc: func(_, o any) { set(o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if m, ok := o.(*metav1.PartialObjectMetadata); ok {
				t.mu.Lock()
				delete(t.gen, m.Namespace+"/"+m.Name)
				t.mu.Unlock()
			}
		},
	})
	return t
}

// count is how many copies satisfy keep.
func (t *copyTracker) count(keep func(root string, gen int64) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.gen {
		if keep(s.root, s.gen) {
			n++
		}
	}
	return n
}

// waitFor polls cond every 100 ms until it holds, printing its state every 10 s, and fails the
// benchmark after timeout.
func waitFor(b *testing.B, pr progress, what string, timeout time.Duration, cond func() (bool, string)) {
	deadline, last := time.Now().Add(timeout), time.Now()
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %s waiting for %s: %s", timeout, what, state)
		}
		if time.Since(last) >= 10*time.Second {
			pr.printf("waiting for %s: %s", what, state)
			last = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writesOf sums the mutating requests between two readings of an API server's requests to the
// resources named: what a propagator writes (policies, their status, its events).
func writesOf(before, after map[string]float64, resources ...string) float64 {
	var sum float64
	for k, v := range after {
		f := strings.Fields(k)
		if len(f) >= 2 && mutatingVerbs[f[0]] && slices.Contains(resources, f[1]) {
			sum += v - before[k]
		}
	}
	return sum
}
