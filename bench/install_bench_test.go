//go:build integration

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// installWait bounds each step of BenchmarkInstall.
const installWait = 3 * time.Minute

// BenchmarkInstall times the install modes on local API servers whose process-runtime nodes
// (procruntime.NodeRunner in this process, the hub with kube-scheduler) run the charts' pods as
// processes of a flotilla binary built from the checkout: `flotilla init --install --replicas 1`
// (in process, through the root command) from its start to its return (the Deployment available,
// the CRDs, the bootstrap identity) and to the hub's /readyz; then `flotilla join --install` on a
// spoke from its start to the ManagedCluster Joined and Available on the hub, accepted by the
// administrator as `flotilla accept` does. After 30 s at rest it reads the hub's and the agent's
// resident memory and the hub's CPU over 10 s, to set against the charts' requests and limits.
// A new fleet is started for each iteration, and given 10 s to settle, outside the timings.
//
// Each iteration then does the same on a fleet with real nodes (installOnRealNodes: the image
// imported into each node, the pods as containers), and measures the hub container from its
// cgroup at rest and with FLOTILLA_BENCH_CLUSTERS (default 1,000) clusters, against the chart's
// memory request and limit. Needs root and containerd, as real nodes do.
func BenchmarkInstall(b *testing.B) {
	startRecord(b, "bench-install")
	bins := binaries(b)
	bin := buildFlotilla(b)
	clk := clockTicks()
	// rest is the time at rest before the hub's figures, window the CPU sample: shorter in a smoke
	// run, which checks that the benchmark works, not its figures.
	clusters, rest, window := 1000, 30*time.Second, 10*time.Second
	if smoke() {
		clusters, rest, window = 20, 2*time.Second, 2*time.Second
	}
	if v := os.Getenv(clustersEnv); v != "" {
		var err error
		if clusters, err = strconv.Atoi(v); err != nil || clusters < 1 {
			b.Fatalf("%s=%q: want a positive number of clusters", clustersEnv, v)
		}
	}
	param(b, "clusters", clusters)
	var onReal realInstall
	var availS, initS, readyS, joinS, hubRSS, agentRSS, hubCPU float64
	for i := range b.N {
		dir := b.TempDir()
		f, err := localk8s.StartFleet(context.Background(), localk8s.FleetOptions{
			Dir: dir, Binaries: bins, Spokes: []string{"spoke-1"}, HubScheduler: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		r := startRuntimes(b, f, bin)
		// A real cluster's controllers have been running for long when a chart is installed; a
		// fresh kube-controller-manager starts its controllers in the first seconds (measured:
		// the Deployment was scaled 4 s after it was applied without this).
		time.Sleep(settle)
		hubCS, err := kubernetes.NewForConfig(f.Hub.Config)
		if err != nil {
			b.Fatal(err)
		}

		bootstrap := filepath.Join(dir, "bootstrap.kubeconfig")
		health := freePort(b)
		webhook := freePort(b)
		start := time.Now()
		available := watchAvailable(hubCS, "open-cluster-management-hub", "flotilla-hub", start)
		readyz := watchReadyz(fmt.Sprintf("http://127.0.0.1:%d/readyz", health), start)
		out := runCLI(b, start, "init", "--install", "--replicas", "1", "--kubeconfig", f.Hub.Kubeconfig, "--bootstrap-kubeconfig", bootstrap,
			"--wait", installWait.String(),
			"--set", "ports.webhook="+strconv.Itoa(webhook), "--set", "ports.health="+strconv.Itoa(health),
			"--set", "ports.metrics="+strconv.Itoa(freePort(b)), "--set", "ports.explain="+strconv.Itoa(freePort(b)),
			"--set", "webhook.advertiseAddress=127.0.0.1:"+strconv.Itoa(webhook),
			"--set", "extraArgs[0]=--dynamic-scoring-allow-local-addresses")
		initD := time.Since(start)
		availD, readyD := <-available, <-readyz
		if availD < 0 || readyD < 0 {
			b.Fatalf("the hub's Deployment available after %s, its /readyz after %s (-1s: not within %s)", availD, readyD, installWait)
		}
		if i == 0 {
			// Benchmarks' logs are cut at a few lines: this goes to stderr.
			fmt.Fprintf(os.Stderr, "install-bench: flotilla init --install, seconds from its start:\n%s\ninstall-bench: events in the hub's namespace:\n%s",
				out, events(b, hubCS, "open-cluster-management-hub", start))
		}

		start = time.Now()
		runCLI(b, start, "join", "--install", "--cluster-name", "spoke-1", "--bootstrap-kubeconfig", bootstrap,
			"--kubeconfig", f.Spokes[0].Kubeconfig, "--wait", installWait.String())
		acceptAndWaitAvailable(b, f.Hub.Config, hubCS, "spoke-1")
		joinD := time.Since(start)

		hubPID := podPID(b, hubCS, "open-cluster-management-hub")
		agentPID := podPID(b, r.spokeCS, "open-cluster-management-agent")
		time.Sleep(rest)
		t0, c0 := time.Now(), cpuTicksOfPID(b, hubPID, "flotilla hub")
		time.Sleep(window)
		cpu := float64(cpuTicksOfPID(b, hubPID, "flotilla hub")-c0) / float64(clk) / time.Since(t0).Seconds() * 100
		hub, agent := statusBytesOf(b, hubPID, "flotilla hub", "VmRSS"), statusBytesOf(b, agentPID, "flotilla agent", "VmRSS")
		b.Logf("iteration %d: Deployment available %.1f s, init --install returned %.1f s, hub /readyz %.1f s; join --install to Available %.1f s; at rest hub %.0f MiB %.1f%% of a core, agent %.0f MiB",
			i+1, availD.Seconds(), initD.Seconds(), readyD.Seconds(), joinD.Seconds(), mib(hub), cpu, mib(agent))
		availS += availD.Seconds()
		initS += initD.Seconds()
		readyS += readyD.Seconds()
		joinS += joinD.Seconds()
		hubRSS += mib(hub)
		agentRSS += mib(agent)
		hubCPU += cpu
		r.stop()
		f.Stop()

		ri := installOnRealNodes(b, bins, clusters, rest, window)
		onReal.importS += ri.importS
		onReal.initS += ri.initS
		onReal.joinS += ri.joinS
		onReal.hubMiB += ri.hubMiB
		onReal.hubRSS += ri.hubRSS
		onReal.hubCPU += ri.hubCPU
		onReal.nodeMiB += ri.nodeMiB
		onReal.scaleMiB += ri.scaleMiB
		onReal.scaleCPU += ri.scaleCPU
		onReal.peakMiB = max(onReal.peakMiB, ri.peakMiB)
		onReal.registeredS += ri.registeredS
		onReal.requestMiB, onReal.limitMiB = ri.requestMiB, ri.limitMiB
	}
	n := float64(b.N)
	report(b, availS/n, "s-hub-available")
	report(b, initS/n, "s-init")
	report(b, readyS/n, "s-hub-readyz")
	report(b, joinS/n, "s-join-available")
	report(b, hubRSS/n, "MiB-hub")
	report(b, hubCPU/n, "%cpu-hub")
	report(b, agentRSS/n, "MiB-agent")
	report(b, onReal.importS/n, "s-image-import-per-node-real")
	report(b, onReal.initS/n, "s-init-real")
	report(b, onReal.joinS/n, "s-join-available-real")
	report(b, onReal.hubMiB/n, "MiB-hub-real")
	report(b, onReal.hubRSS/n, "MiB-hub-real-rss")
	report(b, onReal.hubCPU/n, "%cpu-hub-real")
	report(b, onReal.nodeMiB/n, "MiB-per-real-node")
	report(b, onReal.registeredS/n, "s-clusters-set-up-real")
	report(b, onReal.scaleMiB/n, "MiB-hub-real-with-clusters")
	report(b, onReal.scaleCPU/n, "%cpu-hub-real-with-clusters")
	report(b, onReal.peakMiB, "MiB-hub-real-peak")
	report(b, onReal.requestMiB, "MiB-hub-request")
	report(b, onReal.limitMiB, "MiB-hub-limit")
	report(b, 0, "ns/op")
}

// watchAvailable reports, once, how long after start Deployment ns/name had all its replicas
// available, polling every 100 ms; -1 s if not within installWait.
func watchAvailable(cs kubernetes.Interface, ns, name string, start time.Time) <-chan time.Duration {
	out := make(chan time.Duration, 1)
	go func() {
		err := poll(context.Background(), installWait, func() (bool, error) {
			d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas >= 1 &&
				d.Status.AvailableReplicas == d.Status.Replicas, nil
		})
		if err != nil {
			out <- -time.Second
			return
		}
		out <- time.Since(start)
	}()
	return out
}

// watchReadyz reports, once, how long after start url first answered 200, polling every
// 100 ms; -1 s if not within installWait.
func watchReadyz(url string, start time.Time) <-chan time.Duration {
	out := make(chan time.Duration, 1)
	go func() {
		err := poll(context.Background(), installWait, func() (bool, error) {
			resp, err := http.Get(url)
			if err != nil {
				return false, nil
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil {
			out <- -time.Second
			return
		}
		out <- time.Since(start)
	}()
	return out
}
