//go:build integration

package bench

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/configpolicy"
	"github.com/flotilla/flotilla/internal/agent/builtin/policyframework"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

const (
	complianceClustersEnv = "FLOTILLA_BENCH_COMPLIANCE_CLUSTERS"
	complianceSpokesEnv   = "FLOTILLA_BENCH_COMPLIANCE_SPOKES"
	compliancePolicy      = "bench-compliance"
	warmupPolicy          = "bench-warmup"
)

// bindAll binds policy to Placement "all" with a binding of name.
func bindAll(ctx context.Context, b *testing.B, hubAPI *hubAPIServer, name, policy string) {
	binding := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name},
		PlacementRef: policyv1.PlacementSubject{APIGroup: clusterv1beta1.GroupVersion.Group, Kind: "Placement", Name: "all"},
		Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: policy}}}
	if err := hubAPI.Client.Create(ctx, binding); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPolicyCompliance measures compliance coming back (governance API, issue 35): N
// clusters, each with the real governance-policy-framework and config-policy-controller add-ons
// (run in this process, each with its own connections at an agent's client rate, the clusters'
// namespaces spread over S spoke API servers), the Flotilla hub as a process. One policy asks
// every cluster for a ConfigMap in its own namespace on its spoke (a hub template names it).
// Measured, from each copy's reported history on the hub: the policy created (inform) to every
// cluster reporting NonCompliant; an edit to enforce to every cluster reporting Compliant (the
// ConfigMap created: the "policy edit compliant on 1,000 clusters"); an edit of the
// ConfigMap's data to every cluster reporting the new spec; drift on one cluster put right
// (enforce) and reported (inform); the hub's CPU and peak memory while the clusters report. The
// add-ons act as the hub's administrator here (no per-cluster hub identities): the hub's work and
// the add-ons' are what is measured, not RBAC.
//
// `make bench-policy-compliance`; FLOTILLA_BENCH_COMPLIANCE_CLUSTERS and _SPOKES size it.
func BenchmarkPolicyCompliance(b *testing.B) {
	startRecord(b, "bench-policy-compliance")
	if !selected("PolicyCompliance") {
		b.Skip("runs for minutes: select it by name (make bench-policy-compliance)")
	}
	n := sized(b, complianceClustersEnv, 1000, 5)
	spokes := sized(b, complianceSpokesEnv, 4, 1)
	param(b, "clusters", n)
	param(b, "spokes", spokes)
	ctrllog.SetLogger(logr.Discard())
	bins := binaries(b)
	hubBin := buildFlotilla(b)
	for range b.N {
		r := runPolicyCompliance(b, bins, hubBin, n, spokes)
		report(b, float64(n), "clusters")
		report(b, r.warm.Seconds(), "s-agents-started-and-reported")
		reportLatency(b, r.initial, time.Second, func(s string) string { return "created-to-reported-" + s })
		reportLatency(b, r.enforce, time.Second, func(s string) string { return "enforce-edit-to-compliant-" + s })
		reportLatency(b, r.edit, time.Second, func(s string) string { return "edit-to-reported-" + s })
		report(b, r.allEnforce.Seconds(), "s-enforce-edit-all-compliant")
		report(b, r.enforcePropagated.Seconds(), "s-enforce-edit-all-copies-written")
		report(b, r.driftRestored.Seconds(), "s-drift-restored")
		report(b, r.driftReported.Seconds(), "s-drift-reported")
		report(b, r.hubRequests, "hub-requests-per-cluster-enforce")
		report(b, r.spokeRequests, "spoke-requests-per-cluster-enforce")
		report(b, r.hubCPU, "cpu-%-hub")
		report(b, r.hubAPICPU, "cpu-%-hub-apiserver-enforce")
		report(b, r.spokesCPU, "cpu-%-spoke-apiservers-enforce")
		report(b, r.agentsCPU, "cpu-%-add-ons-enforce")
		report(b, r.copyWrite, "s-copy-write-mean-enforce")
		report(b, mib(r.hubPeak), "MiB-rss-hub-peak")
	}
	report(b, 0, "ns/op")
}

type complianceResult struct {
	warm                         time.Duration
	initial, enforce, edit       []time.Duration
	allEnforce                   time.Duration
	enforcePropagated            time.Duration // the edit to the last copy's new spec seen
	driftRestored, driftReported time.Duration
	hubCPU                       float64
	hubRequests, spokeRequests   float64 // per cluster, from the enforce edit to all compliant
	// From the enforce edit to all compliant: CPU (% of a core) of the hub API server, the spoke
	// API servers and this process (the add-ons), and the mean time of a copy's write.
	hubAPICPU, spokesCPU, agentsCPU float64
	copyWrite                       float64
	hubPeak                         int64
}

func runPolicyCompliance(b *testing.B, bins localk8s.Binaries, hubBin string, n, s int) complianceResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr := progress{start: time.Now()}
	pr.printf("policy compliance: %d clusters on %d spoke API servers", n, s)
	dir := b.TempDir()
	hubAPI, firstSpoke, clusters := startAcceptedFleet(ctx, b, pr, bins, dir, n)
	spokeAPIs := []*hubAPIServer{firstSpoke}
	for i := 1; i < s; i++ {
		spokeAPIs = append(spokeAPIs, startHubAPIServer(b, bins, filepath.Join(dir, fmt.Sprintf("spoke-%d", i))))
	}
	hub := startHubServingArgs(b, hubBin, hubAPI.Kubeconfig, filepath.Join(dir, "flotilla-hub.log"), false)
	defer hub.Stop(5 * time.Second)
	clk := clockTicks()
	waitSettled(b, pr, hub, clk)
	placeAll(ctx, b, pr, hubAPI, n)
	spokeOf := map[string]*hubAPIServer{}
	for i, c := range clusters {
		spokeOf[c] = spokeAPIs[i%len(spokeAPIs)]
	}
	reports := trackReports(ctx, b, hubAPI)
	var r complianceResult
	// The add-ons start (each installs or finds the CRD, discovers its spoke, watches) and a
	// first policy, of a namespace every cluster has, reaches them all: what is measured after is
	// the steady path, not the agents' start.
	tw := time.Now()
	startGovernanceAgents(ctx, b, clusters, hubAPI, spokeOf)
	warm := benchPolicy(warmupPolicy) // inform: a namespace no cluster has
	if err := hubAPI.Client.Create(ctx, warm); err != nil {
		b.Fatal(err)
	}
	bindAll(ctx, b, hubAPI, "warmup", warmupPolicy)
	reports.wait(b, pr, "every cluster's add-ons to start and report", warmupPolicy, n, tw, policyv1.NonCompliant, "not found")
	r.warm = time.Since(tw)
	pr.printf("add-ons started, every cluster reported a first policy in %s", r.warm.Round(time.Millisecond))
	waitSettled(b, pr, hub, clk)

	// Created, inform: every cluster reports the ConfigMap missing.
	t0 := time.Now()
	if err := hubAPI.Client.Create(ctx, compliancePolicyObject("inform", "1")); err != nil {
		b.Fatal(err)
	}
	bindAll(ctx, b, hubAPI, "all", compliancePolicy)
	r.initial = reports.wait(b, pr, "every cluster to report NonCompliant", compliancePolicy, n, t0, policyv1.NonCompliant, "not found")
	pr.printf("created: every cluster reported in %s", maxOf(r.initial).Round(time.Millisecond))
	waitSettled(b, pr, hub, clk)

	// Edited to enforce: every cluster creates its ConfigMap and reports Compliant.
	cpu0 := cpuTicksOf(b, hub)
	hubReqs0, spokeReqs0 := requestsOf(ctx, b, hubAPI), requestsOf(ctx, b, spokeAPIs...)
	// Where the machine's CPU goes meanwhile, and how long the hub API server takes to write a copy.
	hubAPICPU0, spokesCPU0, agentsCPU0 := cpuTicksOf(b, hubAPI.APIServer), apiServersCPU(b, spokeAPIs), selfCPU(b)
	patch0 := requestSeconds(ctx, b, hubAPI, "PATCH", "policies")
	t1 := time.Now()
	updatePolicy(ctx, b, hubAPI.Client, "enforce", "1")
	// Any Compliant report after the edit: all were NonCompliant before it. (Its first message,
	// "created", may be overtaken by "found as specified" before the framework reports.)
	r.enforce = reports.wait(b, pr, "every cluster to report Compliant", compliancePolicy, n, t1, policyv1.Compliant, "")
	r.allEnforce = maxOf(r.enforce)
	var copies int
	r.enforcePropagated, copies = reports.propagated(compliancePolicy, n, t1)
	pr.printf("enforce: the hub wrote %d of %d copies, the last %s after the edit", copies, n, r.enforcePropagated.Round(time.Millisecond))
	r.hubCPU = float64(cpuTicksOf(b, hub)-cpu0) / float64(clk) / time.Since(t1).Seconds() * 100
	// What the edit cost the API servers, per cluster: the hub's and the spokes' requests over
	// the window (the add-ons' resyncs in it included, as they would be on a fleet).
	elapsed := time.Since(t1).Seconds()
	percent := func(ticks int64) float64 { return float64(ticks) / float64(clk) / elapsed * 100 }
	r.hubAPICPU = percent(cpuTicksOf(b, hubAPI.APIServer) - hubAPICPU0)
	r.spokesCPU = percent(apiServersCPU(b, spokeAPIs) - spokesCPU0)
	r.agentsCPU = (selfCPU(b) - agentsCPU0).Seconds() / elapsed * 100
	patch1 := requestSeconds(ctx, b, hubAPI, "PATCH", "policies")
	if n := patch1.count - patch0.count; n > 0 {
		r.copyWrite = (patch1.sum - patch0.sum) / n
	}
	pr.printf("CPU (%% of a core) from the edit to all compliant: hub API server %.0f, spoke API servers %.0f, add-ons (this process) %.0f, hub %.0f; "+
		"the hub API server took %.3f s per copy write (PATCH policies, mean)", r.hubAPICPU, r.spokesCPU, r.agentsCPU, r.hubCPU, r.copyWrite)
	for _, api := range []struct {
		name          string
		before, after map[string]float64
		per           *float64
	}{{"hub", hubReqs0, requestsOf(ctx, b, hubAPI), &r.hubRequests}, {"spokes", spokeReqs0, requestsOf(ctx, b, spokeAPIs...), &r.spokeRequests}} {
		pr.printf("requests to the %s API server(s) from the edit to all compliant:", api.name)
		printRequestDelta(pr, api.before, api.after, elapsed)
		*api.per = (sumOf(api.after) - sumOf(api.before)) / float64(n)
	}
	pr.printf("enforce: every cluster compliant in %s (hub CPU %.0f%%)", r.allEnforce.Round(time.Millisecond), r.hubCPU)
	waitSettled(b, pr, hub, clk)

	// The ConfigMap's data edited: every cluster updates it and reports the new spec.
	t2 := time.Now()
	updatePolicy(ctx, b, hubAPI.Client, "enforce", "2")
	// A report of the new spec: the framework adds a history entry for each spec it evaluates.
	r.edit = reports.wait(b, pr, "every cluster to report the edit", compliancePolicy, n, t2, policyv1.Compliant, "")
	pr.printf("edit: every cluster reported in %s", maxOf(r.edit).Round(time.Millisecond))
	waitSettled(b, pr, hub, clk)

	// Drift on one cluster: its ConfigMap deleted, put back (enforce)...
	victim := clusters[len(clusters)/2]
	spoke := spokeOf[victim].Kube
	t3 := time.Now()
	if err := spoke.CoreV1().ConfigMaps(victim).Delete(ctx, compliancePolicy, metav1.DeleteOptions{}); err != nil {
		b.Fatal(err)
	}
	waitFor(b, pr, "the deleted ConfigMap put back", 5*time.Minute, func() (bool, string) {
		_, err := spoke.CoreV1().ConfigMaps(victim).Get(ctx, compliancePolicy, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	r.driftRestored = time.Since(t3)
	// ... and, under inform, changed and reported.
	tInform := time.Now()
	updatePolicy(ctx, b, hubAPI.Client, "inform", "2")
	reports.wait(b, pr, "every cluster to report under inform", compliancePolicy, n, tInform, policyv1.Compliant, "found as specified")
	waitSettled(b, pr, hub, clk)
	t4 := time.Now()
	cm, err := spoke.CoreV1().ConfigMaps(victim).Get(ctx, compliancePolicy, metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cm.Data["v"] = "drifted"
	if _, err := spoke.CoreV1().ConfigMaps(victim).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		b.Fatal(err)
	}
	reports.waitOne(b, pr, compliancePolicy, victim, t4, policyv1.NonCompliant)
	r.driftReported = time.Since(t4)
	r.hubPeak = statusBytes(b, hub, "VmHWM")
	pr.printf("drift: restored in %s, reported in %s; hub peak %.0f MiB", r.driftRestored.Round(time.Millisecond),
		r.driftReported.Round(time.Millisecond), mib(r.hubPeak))
	return r
}

// compliancePolicyObject asks every cluster for ConfigMap bench-compliance (data v) in the
// namespace named after it, under remediation.
func compliancePolicyObject(remediation, v string) *policyv1.Policy {
	def := fmt.Sprintf(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":%q},
		"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":
		{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"{{hub .ManagedClusterName hub}}","name":%q},"data":{"v":%q}}}]}}`,
		compliancePolicy, compliancePolicy, v)
	return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: compliancePolicy}, Spec: policyv1.PolicySpec{
		RemediationAction: policyv1.RemediationAction(remediation),
		PolicyTemplates:   []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(def)}}}}}
}

func updatePolicy(ctx context.Context, b *testing.B, c client.Client, remediation, v string) {
	p := &policyv1.Policy{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: compliancePolicy}, p); err != nil {
		b.Fatal(err)
	}
	p.Spec = compliancePolicyObject(remediation, v).Spec
	if err := c.Update(ctx, p); err != nil {
		b.Fatal(err)
	}
}

// startGovernanceAgents runs both governance add-ons of every cluster in this process, each with
// its own connections at an agent's client rate, the cluster's namespace on its spoke.
func startGovernanceAgents(ctx context.Context, b *testing.B, clusters []string, hubAPI *hubAPIServer, spokeOf map[string]*hubAPIServer) {
	for _, name := range clusters {
		log := agentErrorLog(name)
		env := builtin.Env{ClusterName: name, HubConfig: agentConfig(hubAPI.Config), Spoke: agentConfig(spokeOf[name].Config), Clock: clock.RealClock{}, Log: log}
		for _, a := range []builtin.AddOn{policyframework.AddOn{}, configpolicy.AddOn{}} {
			// As the agent's add-on manager does: a run that ends is started again after a backoff.
			go func() {
				for ctx.Err() == nil {
					if err := a.Run(ctx, env); err != nil && ctx.Err() == nil {
						log.Error(err, "the add-on stopped; starting it again", "addon", a.Name())
					}
					select {
					case <-ctx.Done():
					case <-time.After(builtin.RestartBackoff):
					}
				}
			}()
		}
	}
}

// reportTracker follows the copies of the benchmark's policies through one informer: each
// cluster's compliance with each and its latest history entry.
type reportTracker struct {
	mu sync.Mutex
	// by is keyed by policy name, then cluster: every change seen, oldest first.
	by map[string]map[string][]trackedReport
	// specs is keyed the same: when the copy's latest generation (the hub's write of its spec)
	// was first seen.
	specs map[string]map[string]seenSpec
}

type seenSpec struct {
	generation int64
	at         time.Time
}

// maxTracked bounds the changes kept per policy and cluster.
const maxTracked = 32

type trackedReport struct {
	state   policyv1.ComplianceState
	at      time.Time // the entry's own time (whole seconds)
	seen    time.Time // when the benchmark saw it
	message string
}

func trackReports(ctx context.Context, b *testing.B, hubAPI *hubAPIServer) *reportTracker {
	t := &reportTracker{by: map[string]map[string][]trackedReport{}, specs: map[string]map[string]seenSpec{}}
	observe := func(o any) {
		p, ok := o.(*policyv1.Policy)
		if !ok {
			return
		}
		root, isCopy := strings.CutPrefix(p.Labels[policyv1.RootPolicyLabel], benchNamespace+".")
		if !isCopy {
			return
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.specs[root] == nil {
			t.specs[root] = map[string]seenSpec{}
		}
		if t.specs[root][p.Namespace].generation != p.Generation {
			t.specs[root][p.Namespace] = seenSpec{generation: p.Generation, at: time.Now()}
		}
		if len(p.Status.Details) == 0 || p.Status.Details[0] == nil || len(p.Status.Details[0].History) == 0 {
			return
		}
		h := p.Status.Details[0].History[0]
		if t.by[root] == nil {
			t.by[root] = map[string][]trackedReport{}
		}
		seen := t.by[root][p.Namespace]
		var old trackedReport
		if len(seen) > 0 {
			old = seen[len(seen)-1]
		}
		if old.state != p.Status.ComplianceState || old.message != h.Message || !old.at.Equal(h.LastTimestamp.Time) {
			seen = append(seen, trackedReport{state: p.Status.ComplianceState, at: h.LastTimestamp.Time, seen: time.Now(), message: h.Message})
			if len(seen) > maxTracked {
				seen = seen[len(seen)-maxTracked:]
			}
			t.by[root][p.Namespace] = seen
		}
	}
	inform(ctx, b, hubAPI.Config, &policyv1.Policy{}, toolscache.ResourceEventHandlerFuncs{
		AddFunc: observe, UpdateFunc: func(_, o any) { observe(o) },
	})
	return t
}

// done is, for each cluster that reported state (its message containing word) after since, how
// long after since the benchmark first saw such a report.
func (t *reportTracker) done(policy string, since time.Time, state policyv1.ComplianceState, word string) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []time.Duration
	for _, seen := range t.by[policy] {
		for _, r := range seen {
			if r.state == state && !r.at.Before(since.Truncate(time.Second)) && !r.seen.Before(since) && strings.Contains(r.message, word) {
				out = append(out, r.seen.Sub(since))
				break
			}
		}
	}
	return out
}

// propagated is when the last of policy's copies got the spec written after since, after since
// (zero with the count when not every one of n has).
func (t *reportTracker) propagated(policy string, n int, since time.Time) (time.Duration, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last time.Duration
	count := 0
	for _, s := range t.specs[policy] {
		if !s.at.Before(since) {
			count++
			last = max(last, s.at.Sub(since))
		}
	}
	if count < n {
		return 0, count
	}
	return last, count
}

func (t *reportTracker) wait(b *testing.B, pr progress, what, policy string, n int, since time.Time, state policyv1.ComplianceState, word string) []time.Duration {
	var got []time.Duration
	waitFor(b, pr, what, 15*time.Minute, func() (bool, string) {
		got = t.done(policy, since, state, word)
		return len(got) >= n, fmt.Sprintf("%d of %d", len(got), n)
	})
	return got
}

func (t *reportTracker) waitOne(b *testing.B, pr progress, policy, cluster string, since time.Time, state policyv1.ComplianceState) {
	waitFor(b, pr, cluster+" to report "+string(state), 5*time.Minute, func() (bool, string) {
		t.mu.Lock()
		defer t.mu.Unlock()
		for _, r := range t.by[policy][cluster] {
			if r.state == state && !r.at.Before(since.Truncate(time.Second)) && !r.seen.Before(since) {
				return true, ""
			}
		}
		return false, "not yet"
	})
}

func maxOf(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// requestsOf is apiserverRequests summed over the API servers.
func requestsOf(ctx context.Context, b *testing.B, apis ...*hubAPIServer) map[string]float64 {
	out := map[string]float64{}
	for _, api := range apis {
		m, err := apiserverRequests(ctx, api.Kube)
		if err != nil {
			b.Fatalf("reading %s's request metrics: %v", api.Name, err)
		}
		for k, v := range m {
			out[k] += v
		}
	}
	return out
}

func sumOf(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

func apiServersCPU(b *testing.B, apis []*hubAPIServer) int64 {
	var t int64
	for _, a := range apis {
		t += cpuTicksOf(b, a.APIServer)
	}
	return t
}

// sumCount is a histogram's sum and count.
type sumCount struct{ sum, count float64 }

// requestSeconds is the API server's apiserver_request_duration_seconds histogram's sum and
// count for verb on resource (no subresource).
func requestSeconds(ctx context.Context, b *testing.B, api *hubAPIServer, verb, resource string) sumCount {
	raw, err := api.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatalf("reading %s's metrics: %v", api.Name, err)
	}
	var out sumCount
	err = promSamples(bytes.NewReader(raw), func(name string, l map[string]string, v float64) {
		if l["verb"] != verb || l["resource"] != resource || l["subresource"] != "" {
			return
		}
		switch name {
		case "apiserver_request_duration_seconds_sum":
			out.sum += v
		case "apiserver_request_duration_seconds_count":
			out.count += v
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
