//go:build integration

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Sizes of the agent benchmark; FLOTILLA_BENCH_RU_NODES and FLOTILLA_BENCH_RU_PODS override them.
const (
	ruNodesEnv, defaultRUNodes = "FLOTILLA_BENCH_RU_NODES", 5000
	ruPodsEnv, defaultRUPods   = "FLOTILLA_BENCH_RU_PODS", 50000
	// ruChangesPerSecond is the pod churn of the window: creates and deletes of GPU pods.
	ruChangesPerSecond = 10
	ruWindow           = 60 * time.Second
	ruCluster          = "cluster-1"
)

// BenchmarkResourceUsageAgent measures the built-in add-on resource-usage (bench/ruagent: the
// add-on alone, as its own process) on a simulated cluster of 5,000 nodes (a third with 8 GPUs)
// and 50,000 pods: the time to its first ResourceUsage, then its CPU (utime+stime from /proc)
// and memory (VmRSS, VmHWM) over a minute of 10 pod changes a second, and how long each change
// takes to show in the ResourceUsage. Targets: under 200 MiB resident, under 5% of a core.
//
// The nodes and pods are API objects on one bare kube-apiserver, which also serves as the hub;
// nothing runs the pods. It takes minutes, so `-bench .` (make bench) skips it:
// `make bench-resourceusage`.
func BenchmarkResourceUsageAgent(b *testing.B) {
	startRecord(b, "bench-resourceusage")
	if !selected("ResourceUsage") {
		b.Skip("runs for minutes: select it by name (make bench-resourceusage)")
	}
	nodes, pods := sized(b, ruNodesEnv, defaultRUNodes, 20), sized(b, ruPodsEnv, defaultRUPods, 100)
	param(b, "nodes", nodes)
	param(b, "pods", pods)
	bins := binaries(b)
	agentBin := buildRUAgent(b)
	for range b.N {
		runResourceUsageAgent(b, bins, agentBin, nodes, pods)
	}
	report(b, 0, "ns/op")
}

// buildRUAgent builds bench/ruagent, the resource-usage add-on as a process of its own.
func buildRUAgent(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "ruagent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/flotilla/flotilla/bench/ruagent").CombinedOutput(); err != nil {
		b.Fatalf("building bench/ruagent: %v\n%s", err, out)
	}
	return bin
}

func runResourceUsageAgent(b *testing.B, bins localk8s.Binaries, agentBin string, nodes, pods int) {
	ctx := context.Background()
	pr := progress{start: time.Now()}
	dir := b.TempDir()
	api := startHubAPIServer(b, bins, filepath.Join(dir, "api"))
	pr.printf("creating %d nodes and %d pods", nodes, pods)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ruCluster}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "work"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: "default"}},
	} {
		if err := api.Client.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%05d", i)
	}
	if err := parallel(names, createWorkers, func(name string) error { return createBenchNode(ctx, api.Client, name) }); err != nil {
		b.Fatal(err)
	}
	pr.printf("%d nodes created", nodes)
	podNames := make([]string, pods)
	for i := range podNames {
		podNames[i] = fmt.Sprintf("p-%06d", i)
	}
	var created atomic.Int64
	if err := parallel(podNames, createWorkers, func(name string) error {
		var i int
		if _, err := fmt.Sscanf(name, "p-%d", &i); err != nil {
			return err
		}
		if n := created.Add(1); n%10000 == 0 {
			pr.printf("%d pods created", n)
		}
		return api.Client.Create(ctx, benchPod(name, names[i%nodes], 0))
	}); err != nil {
		b.Fatal(err)
	}
	pr.printf("%d pods created; starting the add-on", pods)

	t0 := time.Now()
	agent, err := localk8s.StartProcess("ruagent", agentBin, []string{"--kubeconfig", api.Kubeconfig, "--cluster", ruCluster}, filepath.Join(dir, "ruagent.log"), false)
	if err != nil {
		b.Fatal(err)
	}
	defer agent.Stop(5 * time.Second)
	var first time.Duration
	if err := poll(ctx, 5*time.Minute, func() (bool, error) {
		u := &usagev1alpha1.ResourceUsage{}
		if err := api.Client.Get(ctx, client.ObjectKey{Namespace: ruCluster, Name: usagev1alpha1.ResourceUsageName}, u); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		first = time.Since(t0)
		return u.Status.Nodes == int32(nodes), nil
	}); err != nil {
		b.Fatalf("no ResourceUsage of %d nodes: %v (log %s)", nodes, err, filepath.Join(dir, "ruagent.log"))
	}
	clk := clockTicks()
	pr.printf("first ResourceUsage after %s; agent %s", first.Round(100*time.Millisecond), procSummary(agent, clk))
	time.Sleep(5 * time.Second) // let the start-up's garbage go

	// The window: each second, 10 changes (a GPU pod created on a GPU node, or one deleted). Each
	// change's latency is from its request's return to a ResourceUsage whose requested GPUs
	// include it, seen by a watch.
	rss0 := rss(b, agent)
	cpu0, w0 := cpuTicksOf(b, agent), time.Now()
	window := ruWindow
	if smoke() {
		window = 5 * time.Second // 25 deletions: within the smoke run's 100 pods
	}
	lat := churnGPUPods(ctx, b, api.Client, names, window, ruChangesPerSecond)
	cpu := float64(cpuTicksOf(b, agent)-cpu0) / float64(clk) / time.Since(w0).Seconds() * 100
	rssEnd, peak := rss(b, agent), statusBytes(b, agent, "VmHWM")
	pr.printf("window of %s at %d pod changes/s: agent %.2f%% of a core, resident %.0f MiB (%.0f MiB before the window, peak %.0f MiB)",
		window, ruChangesPerSecond, cpu, mib(rssEnd), mib(rss0), mib(peak))
	pr.printf("change to ResourceUsage: %s", latencySummary(lat))
	if log, err := os.ReadFile(filepath.Join(dir, "ruagent.log")); err == nil {
		pr.printf("the add-on's log:\n%s", log)
	}
	report(b, float64(nodes), "nodes")
	report(b, float64(pods), "pods")
	report(b, first.Seconds(), "s-first-usage")
	report(b, cpu, "cpu-%-agent")
	report(b, mib(rssEnd), "MiB-rss-agent")
	report(b, mib(peak), "MiB-rss-agent-peak")
	reportLatency(b, lat, time.Second, func(stat string) string { return stat + "-change" })
}

// createBenchNode creates a Ready node; every third has 8 H100s.
func createBenchNode(ctx context.Context, c client.Client, name string) error {
	var i int
	if _, err := fmt.Sscanf(name, "node-%d", &i); err != nil {
		return err
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if i%3 == 0 {
		alloc["nvidia.com/gpu"] = resource.MustParse("8")
		n.Labels = map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: "NVIDIA-H100-80GB-HBM3"}
	}
	if err := c.Create(ctx, n); err != nil {
		return err
	}
	n.Status = corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}}
	return c.Status().Update(ctx, n)
}

// benchPod is a pod bound to node, asking for gpus GPUs, or for 100m of CPU and 256Mi when gpus
// is 0.
func benchPod(name, node string, gpus int64) *corev1.Pod {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	if gpus > 0 {
		req = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
	}
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: name},
		Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{Name: "c", Image: "img", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}}},
	}
}

// churnGPUPods makes rate pod changes a second for d, alternately creating a pod of one GPU on
// a GPU node and deleting one of the CPU pods, and returns how long each change took to show in
// the cluster's ResourceUsage. GPUs requested only grow and CPU requested only shrinks in the
// window, so an observed ResourceUsage includes change i when its GPUs are at least, and its CPU
// at most, what they were right after change i.
func churnGPUPods(ctx context.Context, b *testing.B, c client.WithWatch, nodes []string, d time.Duration, rate int) []time.Duration {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.Watch(ctx, &usagev1alpha1.ResourceUsageList{}, client.InNamespace(ruCluster))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	u := &usagev1alpha1.ResourceUsage{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ruCluster, Name: usagev1alpha1.ResourceUsageName}, u); err != nil {
		b.Fatal(err)
	}
	gpus, cpu := requested(u)
	type change struct {
		at        time.Time
		gpus, cpu int64
	}
	changes := make(chan change, rate*int(d.Seconds())+1)
	done := make(chan []time.Duration)
	go func() {
		var lat []time.Duration
		var pending []change
		var seenGPUs, seenCPU int64 = -1, 0
		for {
			select {
			case ch, ok := <-changes:
				if !ok {
					// Wait for the last changes to show, a few debounces at most.
					deadline := time.After(10 * time.Second)
					for len(pending) > 0 {
						select {
						case ev := <-w.ResultChan():
							if nu, ok := ev.Object.(*usagev1alpha1.ResourceUsage); ok {
								seenGPUs, seenCPU = requested(nu)
							}
						case <-deadline:
							b.Errorf("%d changes never showed in the ResourceUsage", len(pending))
							done <- lat
							return
						}
						for len(pending) > 0 && seenGPUs >= pending[0].gpus && seenCPU <= pending[0].cpu {
							lat, pending = append(lat, time.Since(pending[0].at)), pending[1:]
						}
					}
					done <- lat
					return
				}
				pending = append(pending, ch)
			case ev := <-w.ResultChan():
				if nu, ok := ev.Object.(*usagev1alpha1.ResourceUsage); ok {
					seenGPUs, seenCPU = requested(nu)
				}
			}
			for len(pending) > 0 && seenGPUs >= pending[0].gpus && seenCPU <= pending[0].cpu {
				lat, pending = append(lat, time.Since(pending[0].at)), pending[1:]
			}
		}
	}()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	zero := int64(0)
	for i, end := 0, time.Now().Add(d); time.Now().Before(end); i++ {
		<-tick.C
		if i%2 == 0 {
			// GPU nodes are every third; spread the pods over them.
			node := nodes[(i/2*3)%len(nodes)/3*3]
			if err := c.Create(ctx, benchPod(fmt.Sprintf("gpu-%06d", i), node, 1)); err != nil {
				b.Fatal(err)
			}
			gpus++
		} else {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: fmt.Sprintf("p-%06d", i/2)}}
			if err := c.Delete(ctx, p, &client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				b.Fatal(err)
			}
			cpu -= 100
		}
		changes <- change{at: time.Now(), gpus: gpus, cpu: cpu}
	}
	close(changes)
	return <-done
}

// requested returns a ResourceUsage's requested GPUs and millicores.
func requested(u *usagev1alpha1.ResourceUsage) (gpus, milliCPU int64) {
	if f := u.Status.Figures(usagev1alpha1.ResourceNvidiaGPU, ""); f != nil {
		gpus = f.Requested.Value()
	}
	if f := u.Status.Figures("cpu", ""); f != nil {
		milliCPU = f.Requested.MilliValue()
	}
	return gpus, milliCPU
}
