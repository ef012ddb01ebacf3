//go:build integration

package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"

	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// poll calls cond every 100 ms until it reports true or fails.
func poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// clockTicks is the kernel's clock ticks per second, the unit of CPU times in /proc.
func clockTicks() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && v > 0 {
			return v
		}
	}
	return 100
}

// cpuTicksOf is a process's user plus system CPU time, in clock ticks, from /proc/<pid>/stat.
func cpuTicksOf(b *testing.B, p *localk8s.Process) int64 { return cpuTicksOfPID(b, p.PID(), p.Name) }

// cpuTicksOfPID is cpuTicksOf for any process; name is for errors.
func cpuTicksOfPID(b *testing.B, pid int, name string) int64 {
	ticks, err := localk8s.CPUTicks(pid)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return ticks
}

// cpuPercent samples a process's CPU use over d, as a percentage of one core.
func cpuPercent(b *testing.B, p *localk8s.Process, clk int64, d time.Duration) float64 {
	t0, c0 := time.Now(), cpuTicksOf(b, p)
	time.Sleep(d)
	c1 := cpuTicksOf(b, p)
	return float64(c1-c0) / float64(clk) / time.Since(t0).Seconds() * 100
}

// statusBytes reads a size field (VmRSS, VmHWM, ...) of /proc/<pid>/status.
func statusBytes(b *testing.B, p *localk8s.Process, field string) int64 {
	return statusBytesOf(b, p.PID(), p.Name, field)
}

// statusBytesOf reads a size field of process pid's /proc status; name is for errors.
func statusBytesOf(b *testing.B, pid int, name, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("%s: no %s in /proc status", name, field)
	return 0
}

// procSummary is a process's total CPU time and resident memory, for progress lines.
func procSummary(p *localk8s.Process, clk int64) string {
	stat, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
	status, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err1 != nil || err2 != nil {
		return "(gone)"
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	var rssKB int64
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return fmt.Sprintf("CPU %.0f s, RSS %.0f MiB", float64(u+s)/float64(clk), float64(rssKB)/1024)
}

var labelRE = regexp.MustCompile(`(\w+)="([^"]*)"`)

// apiserverRequests reads apiserver_request_total from the API server's /metrics, summed by verb,
// resource and code.
func apiserverRequests(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	err = promSamples(bytes.NewReader(raw), func(name string, l map[string]string, v float64) {
		if name != "apiserver_request_total" {
			return
		}
		res := l["resource"]
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		out[fmt.Sprintf("%-6s %s %s", l["verb"], res, l["code"])] += v
	})
	return out, err
}

// promSamples calls f with each labeled sample of a Prometheus text exposition: its metric name,
// its labels and its value. Comments, samples without labels and values that are not numbers are
// skipped.
func promSamples(r io.Reader, f func(name string, labels map[string]string, v float64)) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		name, rest, ok := strings.Cut(s.Text(), "{")
		end := strings.LastIndexByte(rest, '}')
		if !ok || end < 0 || strings.HasPrefix(name, "#") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+1:]), 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for _, m := range labelRE.FindAllStringSubmatch(rest[:end], -1) {
			l[m[1]] = m[2]
		}
		f(name, l, v)
	}
	return s.Err()
}

// requests are an API server's requests so far, by verb, resource and code.
func requests(ctx context.Context, b *testing.B, cs kubernetes.Interface) map[string]float64 {
	m, err := apiserverRequests(ctx, cs)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// writesBetween sums the mutating requests served between two readings, leaving out Leases (the
// load generator's renewals), and prints them by verb and resource.
func writesBetween(pr progress, server string, before, after map[string]float64) float64 {
	var sum float64
	var parts []string
	for k, v := range after {
		f := strings.Fields(k)
		d := v - before[k]
		if d <= 0 || len(f) < 2 || !mutatingVerbs[f[0]] || f[1] == "leases" {
			continue
		}
		sum += d
		parts = append(parts, fmt.Sprintf("%s %s %s: %.0f", f[0], f[1], f[len(f)-1], d))
	}
	slices.Sort(parts)
	pr.printf("%s API server's writes in the window: %s", server, strings.Join(parts, "; "))
	return sum
}

// printRequestDelta prints the API requests served during the window, per second, busiest first:
// the load generator's are the lease PATCHes, nearly all the rest are the hub's.
func printRequestDelta(pr progress, before, after map[string]float64, seconds float64) {
	type row struct {
		key string
		n   float64
	}
	var rows []row
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			rows = append(rows, row{k, d})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.n, a.n) })
	pr.printf("API requests during the window (verb resource code: per second), lease PATCHes are the load generator's:")
	for i, r := range rows {
		if i == 12 {
			break
		}
		pr.printf("  %s: %.2f/s", r.key, r.n/seconds)
	}
}

var controllerRE = regexp.MustCompile(`controller="([^"]+)"`)

// summarizeHubLog prints how many lines the hub logged, its errors by controller and the last
// few, to show which controller was busy or failing without a profile.
func summarizeHubLog(pr progress, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		pr.printf("hub log: %v", err)
		return
	}
	var lines, errs int
	byController := map[string]int{}
	var lastErrs []string
	for line := range strings.Lines(string(data)) {
		lines++
		if !strings.HasPrefix(line, "E") {
			continue
		}
		errs++
		ctrlName := "(none)"
		if m := controllerRE.FindStringSubmatch(line); m != nil {
			ctrlName = m[1]
		}
		byController[ctrlName]++
		if len(line) > 300 {
			line = line[:300] + "..."
		}
		lastErrs = append(lastErrs, strings.TrimSpace(line))
		if len(lastErrs) > 5 {
			lastErrs = lastErrs[1:]
		}
	}
	pr.printf("hub log: %d lines, %d errors %v", lines, errs, byController)
	for _, l := range lastErrs {
		pr.printf("  %s", l)
	}
}

// inform runs an informer of obj's kind against the API server of cfg until ctx ends, with h
// handling its events, and returns once it has listed. Unlike one watch, it lists and watches
// again by itself when the API server ends the watch (which it does to a watcher that falls
// behind, as a benchmark's process serving 1,000 agents can).
func inform(ctx context.Context, b *testing.B, cfg *rest.Config, obj client.Object, h toolscache.ResourceEventHandler) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := crcache.New(cfg, crcache.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := inf.AddEventHandler(h); err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatalf("the informer of %T did not list", obj)
	}
}

// startHubWithMetrics is startHubProcess with controller-runtime's metrics served on a loopback
// port, whose /metrics URL it returns: the controllers' reconciles and queue waits name what a
// slow benchmark waits on (controllerStats).
func startHubWithMetrics(b *testing.B, bin, kubeconfig, logFile string) (*localk8s.Process, string) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(b))
	return startHubServing(b, bin, kubeconfig, logFile, addr), "http://" + addr + "/metrics"
}

// controllerStat is one controller's work so far, from controller-runtime's metrics.
type controllerStat struct {
	reconciles, errors, reconcileSeconds, queued, queueSeconds, retries float64
}

// controllerStats reads every controller's reconciles (and those that failed), the time spent in
// them, and how many items waited in its queue for how long in all.
func controllerStats(ctx context.Context, url string) (map[string]controllerStat, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]controllerStat{}
	err = promSamples(resp.Body, func(name string, l map[string]string, v float64) {
		c := l["controller"]
		if c == "" {
			c = l["name"]
		}
		st := out[c]
		switch name {
		case "controller_runtime_reconcile_total":
			st.reconciles += v
			if l["result"] == "error" {
				st.errors += v
			}
		case "controller_runtime_reconcile_time_seconds_sum":
			st.reconcileSeconds += v
		case "workqueue_queue_duration_seconds_count":
			st.queued += v
		case "workqueue_queue_duration_seconds_sum":
			st.queueSeconds += v
		case "workqueue_retries_total":
			st.retries += v
		default:
			return
		}
		out[c] = st
	})
	return out, err
}

// printControllerDelta prints, busiest first, what each controller did between two readings:
// reconciles (failed), seconds reconciling, retries, and the mean wait of an item in its queue.
func printControllerDelta(pr progress, before, after map[string]controllerStat) {
	type row struct {
		name string
		d    controllerStat
	}
	var rows []row
	for name, a := range after {
		bf := before[name]
		d := controllerStat{reconciles: a.reconciles - bf.reconciles, errors: a.errors - bf.errors,
			reconcileSeconds: a.reconcileSeconds - bf.reconcileSeconds, queued: a.queued - bf.queued,
			queueSeconds: a.queueSeconds - bf.queueSeconds, retries: a.retries - bf.retries}
		if d.reconciles > 0 {
			rows = append(rows, row{name, d})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.d.reconcileSeconds, a.d.reconcileSeconds) })
	pr.printf("the hub's controllers in the window (reconciles, failed, seconds reconciling, retries, mean wait in the queue):")
	for _, r := range rows {
		wait := 0.0
		if r.d.queued > 0 {
			wait = r.d.queueSeconds / r.d.queued
		}
		pr.printf("  %-32s %6.0f %5.0f %8.1f s %5.0f %8.3f s", r.name, r.d.reconciles, r.d.errors, r.d.reconcileSeconds, r.d.retries, wait)
	}
}
