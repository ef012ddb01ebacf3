// Command ruagent runs the built-in add-on resource-usage alone, as its own process, for the
// agent benchmark (BenchmarkResourceUsageAgent): the benchmark reads this process's CPU and memory
// from /proc, with nothing else of the agent beside it. One kubeconfig serves as spoke and hub,
// unless --hub-kubeconfig names the hub's.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the cluster's kubeconfig (spoke, and hub without --hub-kubeconfig)")
	hubKubeconfig := flag.String("hub-kubeconfig", "", "the hub's kubeconfig, when not the cluster's")
	cluster := flag.String("cluster", "", "the cluster's name: its namespace on the hub")
	interval := flag.Duration("interval", resourceusage.DefaultInterval, "refresh interval")
	debounce := flag.Duration("debounce", resourceusage.DefaultDebounce, "debounce")
	flag.Parse()
	if *hubKubeconfig == "" {
		*hubKubeconfig = *kubeconfig
	}
	if err := run(*kubeconfig, *hubKubeconfig, *cluster, resourceusage.AddOn{Interval: *interval, Debounce: *debounce}); err != nil {
		fmt.Fprintln(os.Stderr, "ruagent:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, hubKubeconfig, cluster string, a resourceusage.AddOn) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	hubCfg, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
	if err != nil {
		return err
	}
	// The default rate of the agent's busiest clients (flotilla agent --kube-api-qps, --kube-api-burst).
	cfg.QPS, cfg.Burst = registration.DefaultQPS, registration.DefaultBurst
	hubCfg.QPS, hubCfg.Burst = registration.DefaultQPS, registration.DefaultBurst
	hub, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	fmt.Fprintln(os.Stderr, "ruagent: running for cluster", cluster)
	go reportMemory(ctx)
	err = a.Run(ctx, builtin.Env{ClusterName: cluster, Hub: hub, Spoke: cfg, Clock: clock.RealClock{}, Log: logr.Discard()})
	fmt.Fprintln(os.Stderr, "ruagent: stopped after", time.Since(start).Round(time.Second))
	return err
}

// reportMemory writes the Go heap's figures every 10 s, to tell the add-on's live memory from
// what the runtime keeps.
func reportMemory(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Fprintf(os.Stderr, "ruagent: heap in use %d MiB, heap released %d MiB, sys %d MiB, GC cycles %d\n",
			m.HeapInuse>>20, m.HeapReleased>>20, m.Sys>>20, m.NumGC)
	}
}
