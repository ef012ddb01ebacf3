//go:build integration

package bench

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// settle is how long components run after start-up before their memory is read: informers fill
// their caches in the first seconds.
const settle = 10 * time.Second

// BenchmarkBareAPIServer starts etcd and one kube-apiserver (no controllers) and reports the time
// until /readyz answers and the two processes' resident memory.
func BenchmarkBareAPIServer(b *testing.B) {
	startRecord(b, "bench-apiserver")
	bins := binaries(b)
	for range b.N {
		dir := b.TempDir()
		start := time.Now()
		e, err := localk8s.StartEtcd(context.Background(), localk8s.EtcdOptions{Name: "etcd", Dir: dir + "/etcd", Binaries: bins})
		if err != nil {
			b.Fatal(err)
		}
		c, err := localk8s.StartCluster(context.Background(), localk8s.ClusterOptions{
			Name: "bare", Dir: dir + "/bare", Binaries: bins, EtcdURL: e.URL, APIServerOnly: true,
		})
		if err != nil {
			e.Stop()
			b.Fatal(err)
		}
		ready := time.Since(start)
		time.Sleep(settle)
		report(b, ready.Seconds(), "s-ready")
		report(b, mib(rss(b, c.APIServer)), "MiB-apiserver")
		report(b, mib(rss(b, c.APIServer)+rss(b, e.Process)), "MiB-total")
		c.Stop()
		e.Stop()
	}
	report(b, 0, "ns/op")
}

// BenchmarkDefaultFleet starts the default fleet (hub and gpu-east, gpu-west, edge-1 with
// controller managers, schedulers, kwok and their simulated GPU nodes) and reports the time until
// every node is Ready and the resident memory of all its processes, with one shared etcd and with
// one etcd per cluster.
func BenchmarkDefaultFleet(b *testing.B) {
	startRecord(b, "bench-fleet")
	bins := binaries(b)
	spec := fleet.Default()
	var spokes []string
	for _, c := range spec.Clusters {
		spokes = append(spokes, c.Name)
	}
	for _, etcdPerCluster := range []bool{false, true} {
		if etcdPerCluster && smoke() {
			continue // one fleet proves the benchmark measures
		}
		name := "shared-etcd"
		if etcdPerCluster {
			name = "etcd-per-cluster"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				start := time.Now()
				f, err := localk8s.StartFleet(context.Background(), localk8s.FleetOptions{
					Dir: b.TempDir(), Binaries: bins, Spokes: spokes, EtcdPerCluster: etcdPerCluster,
				})
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range spec.Clusters {
					addNodesAndWait(b, f, c)
				}
				ready := time.Since(start)
				time.Sleep(settle)
				var total int64
				for _, p := range f.Processes() {
					total += rss(b, p)
				}
				report(b, ready.Seconds(), "s-ready")
				report(b, mib(total), "MiB-total")
				report(b, float64(len(f.Processes())), "processes")
				f.Stop()
			}
			report(b, 0, "ns/op")
		})
	}
}

func addNodesAndWait(b *testing.B, f *localk8s.Fleet, c fleet.Cluster) {
	lc, _ := f.Cluster(c.Name)
	cs, err := kubernetes.NewForConfig(lc.Config)
	if err != nil {
		b.Fatal(err)
	}
	for _, np := range c.NodePools {
		if err := localk8s.CreateNodes(context.Background(), cs, np.LocalNodePool()); err != nil {
			b.Fatal(err)
		}
	}
	if err := localk8s.WaitNodesSchedulable(context.Background(), cs, 2*time.Minute); err != nil {
		b.Fatalf("%s: %v", c.Name, err)
	}
}

func binaries(b *testing.B) localk8s.Binaries {
	bins, err := localk8s.FindBinaries()
	if err != nil {
		b.Fatal(err)
	}
	return bins
}

// rss reads a process's resident set size from /proc.
func rss(b *testing.B, p *localk8s.Process) int64 { return statusBytes(b, p, "VmRSS") }

func mib(bytes int64) float64 { return float64(bytes) / (1 << 20) }
