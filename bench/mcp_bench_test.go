//go:build integration

package bench

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/hub/mcpserver"
)

const (
	mcpClustersEnv = "FLOTILLA_BENCH_MCP_CLUSTERS"
	mcpCalls       = 20
)

// BenchmarkMCPReadTools measures each read tool of `flotilla mcp` against a hub holding N
// ManagedClusters (FLOTILLA_BENCH_MCP_CLUSTERS, default 1,000; a quarter with 8 H100s claimed):
// the server (internal/hub/mcpserver) runs in this process with an administrator's client, the SDK's
// client calls it over the SDK's in-memory transport, and each tool is called mcpCalls times after
// one warm-up call. It reports each tool's p50 and maximum with their sample count (mcpCalls is below
// record.MinP99Samples, so no p99). `make bench-mcp`.
func BenchmarkMCPReadTools(b *testing.B) {
	startRecord(b, "bench-mcp")
	if f := flag.Lookup("test.bench"); !smoke() && (f == nil || !strings.Contains(f.Value.String(), "MCP")) {
		b.Skip("select it by name (make bench-mcp)")
	}
	n := sized(b, mcpClustersEnv, 1000, 20)
	param(b, "clusters", n)
	param(b, "calls", mcpCalls)
	h := startHubAPIServer(b, binaries(b), b.TempDir())
	ctx := context.Background()
	ns := "bench-mcp"
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	must(h.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	must(h.Client.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}}))
	must(h.Client.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "bench"}}))
	must(h.Client.Create(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: ns},
		Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: new(int32(10)), Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "h100"}}}}}}}))
	createClusters(b, h, n)

	srv := mcpserver.New(mcpserver.Options{Client: h.Client, Discovery: discovery.NewDiscoveryClientForConfigOrDie(h.Config), Clock: clock.RealClock{}, Namespace: ns})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	must(err)
	b.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
	must(err)
	b.Cleanup(func() { _ = cs.Close() })

	whatIf := fmt.Sprintf("apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: what-if, namespace: %s}\nspec: {numberOfClusters: 5}\n", ns)
	tools := []struct {
		name string
		args map[string]any
	}{
		{"list_clusters", map[string]any{}},
		{"gpu_capacity", map[string]any{}},
		{"list_placements", map[string]any{}},
		{"explain_placement", map[string]any{"name": "gpu"}},
		{"placement_simulate", map[string]any{"placements": whatIf}},
		{"list_manifestworks", map[string]any{}},
	}
	for range b.N {
		for _, tool := range tools {
			var took []time.Duration
			for i := range mcpCalls + 1 {
				start := time.Now()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool.name, Arguments: tool.args})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %+v", tool.name, err, res)
				}
				if i > 0 { // the first call warms the server's caches
					took = append(took, time.Since(start))
				}
			}
			reportLatency(b, took, time.Millisecond, func(stat string) string { return tool.name + "-" + stat })
			b.Logf("%d clusters: %s %s", n, tool.name, latencySummary(took))
		}
	}
}

// createClusters creates n ManagedClusters, a quarter of them labeled and claimed as holding
// 8 H100s, 16 at a time.
func createClusters(b *testing.B, h *hubAPIServer, n int) {
	b.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c-%04d", i),
				Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "bench"}}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
			if i%4 == 0 {
				mc.Labels["gpu"] = "h100"
			}
			if err := h.Client.Create(context.Background(), mc); err != nil {
				errs <- err
				return
			}
			if i%4 == 0 {
				mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: clusterv1.GPUModelsClaim, Value: "NVIDIA-H100-80GB-HBM3"},
					{Name: clusterv1.GPUCountClaimName("NVIDIA-H100-80GB-HBM3"), Value: "8"}}
				if err := h.Client.Status().Update(context.Background(), mc); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
