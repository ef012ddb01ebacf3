//go:build integration

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/bench/record"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// gpuPlacementRoundsEnv overrides how many GPU jobs the latency benchmark starts (default 100,
// the fewest with a p99 that is not the max; fewer report no p99).
const gpuPlacementRoundsEnv = "FLOTILLA_BENCH_GPU_ROUNDS"

// BenchmarkGPUPlacementLatency measures the time from a GPU job starting on a spoke to the
// placement decision reflecting it: the whole chain of the spoke's watch, the resource-usage
// add-on (bench/ruagent, debounced), its ResourceUsage on the hub, and the hub (`flotilla hub`,
// its own process) rescheduling the placement. Two clusters have one node of 8 H100s each, on a
// spoke API server of their own; a placement in namespace bench wants one cluster with a node of
// 8 free H100s. Each round starts a pod of 8 GPUs on the chosen cluster's node (the job starting:
// bound to the node, as the scheduler would) and waits for the placement's decision to move to
// the other cluster; then the pod goes, and the next round fills the other cluster. Target: p99
// under 5 s (OCM: up to 60 s, the add-on's interval, plus a reschedule). A round takes about 4 s
// (the job, then 2.5 s for the emptied cluster to fit again), so 100 rounds about 7 minutes.
//
// `-bench .` (make bench) skips it: `make bench-gpu-placement`.
func BenchmarkGPUPlacementLatency(b *testing.B) {
	startRecord(b, "bench-gpu-placement")
	if !selected("GPUPlacement") {
		b.Skip("select it by name (make bench-gpu-placement)")
	}
	rounds := sized(b, gpuPlacementRoundsEnv, record.MinP99Samples, 2)
	param(b, "rounds", rounds)
	bins := binaries(b)
	hubBin := buildFlotilla(b)
	agentBin := buildRUAgent(b)
	for range b.N {
		lat := runGPUPlacementLatency(b, bins, hubBin, agentBin, rounds)
		reportLatency(b, lat, time.Second, func(stat string) string { return stat })
	}
	report(b, 0, "ns/op")
}

func runGPUPlacementLatency(b *testing.B, bins localk8s.Binaries, hubBin, agentBin string, rounds int) []time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr := progress{start: time.Now()}
	dir := b.TempDir()
	hubAPI := startHubAPIServer(b, bins, filepath.Join(dir, "hub"))
	if err := createPlacementFleet(ctx, pr, hubAPI.Client, 2); err != nil {
		b.Fatal(err)
	}
	clusters := []string{"cluster-00000", "cluster-00001"}
	spokes := make([]*hubAPIServer, len(clusters))
	for i, name := range clusters {
		spokes[i] = startHubAPIServer(b, bins, filepath.Join(dir, name))
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "work"}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: "default"}},
		} {
			if err := spokes[i].Client.Create(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
		if err := createBenchNode(ctx, spokes[i].Client, "node-00000"); err != nil { // 8 H100s
			b.Fatal(err)
		}
		agent, err := localk8s.StartProcess(name+"/ruagent", agentBin, []string{
			"--kubeconfig", spokes[i].Kubeconfig, "--hub-kubeconfig", hubAPI.Kubeconfig, "--cluster", name,
		}, filepath.Join(dir, name+"-ruagent.log"), false)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { agent.Stop(5 * time.Second) })
	}
	hub := startHubProcess(b, hubBin, hubAPI.Kubeconfig, filepath.Join(dir, "flotilla-hub.log"))
	defer hub.Stop(5 * time.Second)
	p := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: "h100", Annotations: map[string]string{
			"placement.flotilla.io/gpu": "model=NVIDIA-H100-80GB-HBM3,perNode=8",
		}},
		Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: new(int32), ClusterSets: []string{benchSet}},
	}
	*p.Spec.NumberOfClusters = 1
	if err := hubAPI.Client.Create(ctx, p); err != nil {
		b.Fatal(err)
	}
	decided := func(timeout time.Duration, want func(string) bool) (string, error) {
		var got string
		err := poll(ctx, timeout, func() (bool, error) {
			list := &clusterv1beta1.PlacementDecisionList{}
			if err := hubAPI.Client.List(ctx, list, client.InNamespace(benchNamespace),
				client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
				return false, err
			}
			got = ""
			for _, d := range list.Items {
				for _, c := range d.Status.Decisions {
					got = c.ClusterName
				}
			}
			return want(got), nil
		})
		return got, err
	}
	chosen, err := decided(2*time.Minute, func(c string) bool { return c != "" })
	if err != nil {
		b.Fatalf("the placement chose no cluster: %v (hub log %s)", err, filepath.Join(dir, "flotilla-hub.log"))
	}
	pr.printf("placement h100 chose %s; %d rounds of a job filling the chosen cluster", chosen, rounds)
	var lat []time.Duration
	zero := int64(0)
	for r := range rounds {
		i := 0
		if chosen == clusters[1] {
			i = 1
		}
		pod := benchPod(fmt.Sprintf("job-%03d", r), "node-00000", 8)
		if err := spokes[i].Client.Create(ctx, pod); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		other := clusters[1-i]
		if _, err := decided(30*time.Second, func(c string) bool { return c == other }); err != nil {
			b.Fatalf("round %d: the decision did not move from %s to %s: %v", r, chosen, other, err)
		}
		lat = append(lat, time.Since(t0))
		chosen = other
		if err := spokes[i].Client.Delete(ctx, pod, &client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			b.Fatal(err)
		}
		// The next round starts once the emptied cluster fits again (2 debounces at most).
		time.Sleep(2500 * time.Millisecond)
		if (r+1)%10 == 0 {
			pr.printf("%d rounds: %s", r+1, latencySummary(lat))
		}
	}
	pr.printf("GPU job start to decision moved: %s", latencySummary(lat))
	return lat
}
