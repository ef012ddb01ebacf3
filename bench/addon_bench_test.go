//go:build integration

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

const (
	addonClustersEnv     = "FLOTILLA_BENCH_ADDON_CLUSTERS"
	defaultAddonClusters = 1000
	benchAddOn           = "bench-addon"
)

// BenchmarkAddOnInstall measures one template add-on enabled on N simulated clusters: the time
// from creating its ClusterManagementAddOn to every ManagedClusterAddOn Available, and what the
// hub adds in CPU and memory. The hub runs as its own process; the clusters' work agents run in
// this process and share one spoke API server, each with its own hub hash. The add-on is enabled
// on every cluster as `flotilla addon enable` does it (a ManagedClusterAddOn per cluster), each
// pointing at an AddOnDeploymentConfig whose agentInstallNamespace is the cluster's own
// namespace on the shared spoke: the template's manifests cannot name a namespace by variable
// (the API server validates embedded objects' metadata), and on one shared spoke every cluster's
// agent would otherwise write the same object. The chain measured is the add-on manager's
// configuration (specHash), the template's ManifestWorks, the agents applying them, and the
// template's health from the works' status.
//
// It takes minutes, so `-bench .` (make bench) skips it: `make bench-addon`.
func BenchmarkAddOnInstall(b *testing.B) {
	startRecord(b, "bench-addon")
	if !selected("AddOn") {
		b.Skip("runs for minutes: select it by name (make bench-addon)")
	}
	n := sized(b, addonClustersEnv, defaultAddonClusters, 5)
	param(b, "clusters", n)
	ctrllog.SetLogger(logr.Discard())
	bins := binaries(b)
	hubBin := buildFlotilla(b)
	for range b.N {
		r := runAddOnInstall(b, bins, hubBin, n)
		report(b, float64(n), "clusters")
		report(b, r.available.Seconds(), "s-all-available")
		report(b, r.hubCPU, "cpu-%-hub")
		report(b, mib(r.hubAdded), "MiB-rss-hub-added")
		report(b, mib(r.hubPeak), "MiB-rss-hub-peak")
		report(b, r.hubWrites, "hub-writes/cluster")
		report(b, r.spokeWrites, "spoke-writes/cluster")
		report(b, r.hubFloor, "s-hub-writes-floor")
		report(b, r.available.Seconds()/r.hubFloor, "x-hub-writes-floor")
	}
	report(b, 0, "ns/op")
}

type addonResult struct {
	available         time.Duration
	hubCPU            float64 // % of one core from the ClusterManagementAddOn to all Available
	hubAdded, hubPeak int64
	// hubWrites and spokeWrites are each API server's writes per cluster from the
	// ClusterManagementAddOn to all Available (mutating requests, the leases left out).
	hubWrites, spokeWrites float64
	// hubFloor is how long the hub's API server takes for the hub-side writes of the install
	// (bench/floor, probed right after): the time cannot be shorter than this.
	hubFloor float64
}

func runAddOnInstall(b *testing.B, bins localk8s.Binaries, hubBin string, n int) addonResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr := progress{start: time.Now()}
	pr.printf("one template add-on on %d clusters", n)
	dir := b.TempDir()
	// Accepted, as real clusters that get add-ons are: the hub delivers nothing to a cluster it
	// has not accepted (the benchmark measured nothing while its clusters were not).
	hubAPI, spokeAPI, clusters := startAcceptedFleet(ctx, b, pr, bins, dir, n)
	if err := parallel(clusters, createWorkers, func(name string) error {
		return spokeAPI.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}); err != nil {
		b.Fatal(err)
	}
	if err := hubAPI.Client.Create(ctx, benchTemplate(b)); err != nil {
		b.Fatal(err)
	}
	if err := parallel(clusters, createWorkers, func(name string) error {
		for _, o := range enabledOn(name) {
			if err := hubAPI.Client.Create(ctx, o); err != nil {
				return fmt.Errorf("creating %T %s/%s: %w", o, name, o.GetName(), err)
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	hub, metrics := startHubWithMetrics(b, hubBin, hubAPI.Kubeconfig, filepath.Join(dir, "flotilla-hub.log"))
	defer hub.Stop(5 * time.Second)
	// Their agents renew their leases (every 60 s, spread), so they stay Available.
	lg := startLoadGen(hubAPI.Kube, clusters, 60*time.Second)
	defer lg.stop()
	clk := clockTicks()
	stopAgents := startWorkAgents(ctx, b, clusters, hubAPI, spokeAPI, true)
	defer func() { cancel(); stopAgents() }()
	waitSettled(b, pr, hub, clk)
	time.Sleep(time.Duration(n) * 10 * time.Millisecond) // the agents list their namespaces
	pr.printf("%d clusters with the add-on enabled, their namespaces on the spoke, the template; work agents running; hub %s", n, procSummary(hub, clk))

	before := rss(b, hub)
	hubReqs, spokeReqs := requests(ctx, b, hubAPI.Kube), requests(ctx, b, spokeAPI.Kube)
	ctrl0, err := controllerStats(ctx, metrics)
	if err != nil {
		b.Fatal(err)
	}
	writes := watchStatusWrites(ctx, b, hubAPI.Config)
	hub0, t0 := cpuTicksOf(b, hub), time.Now()
	profiled := profileAPIServer(ctx, b, pr, hubAPI.Kube, bins.Path("kube-apiserver"), "bench-addon-hub-apiserver", 60*time.Second)
	if err := hubAPI.Client.Create(ctx, benchCMA()); err != nil {
		b.Fatal(err)
	}
	var r addonResult
	last := -1
	err = poll(ctx, 10*time.Minute, func() (bool, error) {
		seen, available := writes.availability()
		if available/100 != last/100 || available == n {
			last = available
			pr.printf("%d ManagedClusterAddOns, %d Available; hub %s", seen, available, procSummary(hub, clk))
		}
		return available == n, nil
	})
	if err != nil {
		b.Fatalf("not every add-on became Available: %v (hub log %s)", err, filepath.Join(dir, "flotilla-hub.log"))
	}
	r.available = time.Since(t0)
	r.hubCPU = float64(cpuTicksOf(b, hub)-hub0) / float64(clk) / r.available.Seconds() * 100
	r.hubAdded, r.hubPeak = rss(b, hub)-before, statusBytes(b, hub, "VmHWM")
	hubReqs1 := requests(ctx, b, hubAPI.Kube)
	r.hubWrites = writesBetween(pr, "hub", hubReqs, hubReqs1) / float64(n)
	r.spokeWrites = writesBetween(pr, "spoke", spokeReqs, requests(ctx, b, spokeAPI.Kube)) / float64(n)
	printRequestDelta(pr, hubReqs, hubReqs1, r.available.Seconds())
	pr.printf("ClusterManagementAddOn to %d ManagedClusterAddOns Available: %s; hub %.1f%% of a core meanwhile, resident %+.0f MiB (peak %.0f MiB); writes per cluster: hub %.2f, spoke %.2f",
		n, r.available.Round(100*time.Millisecond), r.hubCPU, mib(r.hubAdded), mib(r.hubPeak), r.hubWrites, r.spokeWrites)
	if ctrl1, err := controllerStats(ctx, metrics); err == nil {
		printControllerDelta(pr, ctrl0, ctrl1)
	}
	writes.print(pr, n)
	summarizeHubLog(pr, filepath.Join(dir, "flotilla-hub.log"))
	profiled()

	// The hub API server's floor for the install's writes, with the hub and the agents stopped.
	hub.Stop(5 * time.Second)
	cancel()
	stopAgents()
	targets := addonFloorTargets()
	rates, err := probeFloor(context.Background(), hubAPI, targets)
	if err != nil {
		b.Fatal(err)
	}
	made, rest := writesMade(hubReqs, hubReqs1, targets)
	var note string
	r.hubFloor, note = ownFloor(rates, made)
	pr.printf("floor probe of the hub's API server: %s; the install's %.0f hub writes of those kinds (%s) take %.2f s at those rates, and it took %.2fx that%s; other hub writes: %s",
		rates, made.Total(), made, r.hubFloor, r.available.Seconds()/r.hubFloor, note, rest)
	return r
}

// benchTemplate is the add-on's agent: one ConfigMap, which the AddOnDeploymentConfig moves to
// the cluster's namespace.
func benchTemplate(b *testing.B) *addonv1alpha1.AddOnTemplate {
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": addonv1alpha1.DefaultAgentInstallNamespace, "name": benchAddOn},
		"data":     map[string]any{"cluster": "{{CLUSTER_NAME}}"},
	})
	if err != nil {
		b.Fatal(err)
	}
	return &addonv1alpha1.AddOnTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: benchAddOn},
		Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: benchAddOn, AgentSpec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
		}},
	}
}

// enabledOn is the add-on enabled on a cluster: its ManagedClusterAddOn, with an
// AddOnDeploymentConfig that installs the agent in the cluster's namespace on the spoke.
func enabledOn(cluster string) []client.Object {
	adc := addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addondeploymentconfigs"}
	return []client.Object{
		&addonv1alpha1.AddOnDeploymentConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: benchAddOn},
			Spec:       addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: cluster},
		},
		&addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: benchAddOn},
			Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: []addonv1alpha1.AddOnConfig{{
				ConfigGroupResource: adc, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: cluster, Name: benchAddOn},
			}}},
		},
	}
}

// benchCMA is the add-on: the template by default, an AddOnDeploymentConfig per cluster.
func benchCMA() *addonv1alpha1.ClusterManagementAddOn {
	return &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: benchAddOn},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{
				{
					ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addontemplates"},
					DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: benchAddOn},
				},
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addondeploymentconfigs"}},
			},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
		},
	}
}
