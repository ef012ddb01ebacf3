//go:build integration

package bench

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// hubAPIServer is a bare kube-apiserver on an etcd of its own with Flotilla's CRDs installed: the
// hub of the benchmarks that run `flotilla hub` as a process, and the clients they drive it with.
type hubAPIServer struct {
	Etcd *localk8s.Etcd
	*localk8s.Cluster
	// Client and Kube have no client-side rate limit to speak of (5,000 QPS), so the benchmark
	// itself is never what waits.
	Client client.WithWatch
	Kube   kubernetes.Interface
}

// startHubAPIServer starts one under dir; both processes stop when the benchmark ends.
func startHubAPIServer(b *testing.B, bins localk8s.Binaries, dir string) *hubAPIServer {
	ctx := context.Background()
	e, err := localk8s.StartEtcd(ctx, localk8s.EtcdOptions{Name: "etcd", Dir: filepath.Join(dir, "etcd"), Binaries: bins})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Stop)
	c, err := localk8s.StartCluster(ctx, localk8s.ClusterOptions{
		Name: "hub", Dir: filepath.Join(dir, "hub"), Binaries: bins, EtcdURL: e.URL, APIServerOnly: true,
		Profiling: profileDir() != "",
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Stop)
	if _, err := install.Embedded(ctx, c.Config, install.Options{}); err != nil {
		b.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 5000, 10000
	h := &hubAPIServer{Etcd: e, Cluster: c}
	if h.Client, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		b.Fatal(err)
	}
	if h.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		b.Fatal(err)
	}
	return h
}
