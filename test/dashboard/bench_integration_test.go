//go:build integration

package dashboard

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/testenv"
)

// BenchmarkDashboard measures, on a hub with 1,000 and then 5,000 clusters (ManagedCluster
// objects, no agents), the time to first render of the fleet and GPUs views in Chromium (the
// app's Performance API marks, median of 3 loads), and the added memory and CPU of the process
// that serves the dashboard while 10 viewers watch the fleet view and 10 clusters a second
// change. make bench-dashboard; results in bench/README.md.
func BenchmarkDashboard(b *testing.B) {
	env := testenv.Start(b, testenv.Options{CRDs: true})
	c := env.HubClient(b)
	url, proc := serveProcess(b, "--kubeconfig", env.Hub.Kubeconfig)
	ctx := browser(b)
	prefix := "bench-" + strconv.FormatInt(time.Now().Unix(), 36)
	have := 0
	for _, n := range []int{1000, 5000} {
		createClustersFrom(b, c, prefix, have, n-have, map[string]string{"dashboard-test": prefix})
		have = n
		var fleet, gpus []time.Duration
		for range 3 {
			fleet = append(fleet, firstRender(b, ctx, url+"/fleet", "fleet"))
			gpus = append(gpus, firstRender(b, ctx, url+"/gpus", "gpus"))
		}
		slices.Sort(fleet)
		slices.Sort(gpus)
		b.Logf("%d clusters: first render fleet %s, GPUs %s (median of 3; all fleet %v, GPUs %v)", n, fleet[1], gpus[1], fleet, gpus)
		b.ReportMetric(float64(fleet[1].Milliseconds()), fmt.Sprintf("fleet-ms@%d", n))
		b.ReportMetric(float64(gpus[1].Milliseconds()), fmt.Sprintf("gpus-ms@%d", n))
	}

	// 10 viewers: each a browser context of its own (as 10 people's browsers: a browser holds at
	// most 6 connections to a host over HTTP/1.1, and each page holds one stream) on the fleet
	// view (a page of 100 clusters, and a live stream).
	rssBefore, cpuBefore := procRSS(b, proc.Pid), procCPU(b, proc.Pid)
	idle := 20 * time.Second
	time.Sleep(idle)
	rssIdle, cpuIdle := procRSS(b, proc.Pid), procCPU(b, proc.Pid)
	var tabs []context.CancelFunc
	for range 10 {
		tab, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
		tabs = append(tabs, cancel)
		// A page in the background gets no animation frames: poll the DOM on a timer.
		run(b, tab, "a viewer's fleet view", chromedp.Navigate(url+"/fleet"), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.querySelectorAll("tr[data-cluster]").length > 0`,
				chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))(ctx, tg)
			return err
		}))
	}
	defer func() {
		for _, cancel := range tabs {
			cancel()
		}
	}()
	rssOpen, cpuOpen := procRSS(b, proc.Pid), procCPU(b, proc.Pid)
	window := 30 * time.Second
	stop := time.Now().Add(window)
	changes := 0
	for i := 0; time.Now().Before(stop); i++ {
		name := fmt.Sprintf("%s-%05d", prefix, i%have)
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, mc); err == nil {
			patch := client.MergeFrom(mc.DeepCopy())
			mc.Labels["bench-tick"] = strconv.Itoa(i)
			if err := c.Patch(context.Background(), mc, patch); err == nil {
				changes++
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	rssWatch, cpuWatch := procRSS(b, proc.Pid), procCPU(b, proc.Pid)
	ticks := float64(clockTicks())
	idlePct := 100 * float64(cpuIdle-cpuBefore) / ticks / idle.Seconds()
	watchPct := 100 * float64(cpuWatch-cpuOpen) / ticks / window.Seconds()
	b.Logf("dashboard process: RSS %d MiB at rest, %d MiB idle, %d MiB with 10 viewers, %d MiB after %s of %d changes; CPU %.1f%% at rest, %.1f%% while 10 viewers watch",
		rssBefore>>20, rssIdle>>20, rssOpen>>20, rssWatch>>20, window, changes, idlePct, watchPct)
	b.ReportMetric(float64(rssWatch-rssIdle)/(1<<20), "added-MiB-10-viewers")
	b.ReportMetric(watchPct-idlePct, "added-cpu-%-10-viewers")
}

// procRSS is the resident memory of pid in bytes.
func procRSS(b testing.TB, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatalf("no VmRSS for pid %d", pid)
	return 0
}

// procCPU is the user and system CPU time of pid, in clock ticks.
func procCPU(b testing.TB, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	s, _ := strconv.ParseInt(fields[12], 10, 64)
	return u + s
}

// clockTicks is the kernel's clock ticks per second (USER_HZ), 100 on Linux.
func clockTicks() int64 { return 100 }
