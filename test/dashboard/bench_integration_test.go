//go:build integration

package dashboard

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/bench/record"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// BenchmarkDashboard measures, on a hub with 1,000 and then 5,000 clusters (ManagedCluster
// objects, no agents; each with 4 nodes of 8 H100s in its claims and a ResourceUsage with
// per-node figures, so the GPUs view draws its map of every cluster on the page), the time to
// first render of the fleet and GPUs views in Chromium (the
// app's Performance API marks, median of 3 loads), and the added memory and CPU while 10 viewers
// watch the fleet view and 10 clusters a second change, first of `flotilla dashboard` and then
// of `flotilla hub` serving the dashboard over HTTPS to viewers who log in with a token.
// make bench-dashboard; results in bench/README.md.
func BenchmarkDashboard(b *testing.B) {
	rec := record.New("bench-dashboard")
	rec.Param("benchmark", b.Name())
	rec.Param("gpus", "every cluster: 4 nodes x 8 NVIDIA-H100-80GB-HBM3, 0-8 used per node, per-node figures in its ResourceUsage")
	sizes := []int{1000, 5000}
	if record.Smoke() {
		sizes = []int{20, 40}
		rec.Param("smoke", true)
	}
	env := testenv.Start(b, testenv.Options{CRDs: true})
	c := env.HubClient(b)
	url, proc := serveProcess(b, "--kubeconfig", env.Hub.Kubeconfig)
	ctx := browser(b)
	prefix := "bench-" + strconv.FormatInt(time.Now().Unix(), 36)
	have := 0
	for _, n := range sizes {
		createClustersFrom(b, c, prefix, have, n-have, map[string]string{"dashboard-test": prefix})
		giveGPUs(b, c, prefix, have, n-have)
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
		rec.Add(record.Flotilla, fmt.Sprintf("fleet-first-render-median@%d", n), float64(fleet[1].Milliseconds()), "ms", len(fleet))
		rec.Add(record.Flotilla, fmt.Sprintf("gpus-first-render-median@%d", n), float64(gpus[1].Milliseconds()), "ms", len(gpus))
	}

	// The first tab leaves the GPUs view, whose live stream would refetch the whole fleet on
	// every change: only the 10 viewers watch.
	run(b, ctx, "leaving the GPUs view", chromedp.Navigate("about:blank"))
	change := clusterChanger(c, prefix, have)
	w := viewers{ctx: ctx, change: change, rec: rec}
	w.measure(b, "dashboard", proc.Pid, url+"/fleet", nil)

	// The hub, as a chart runs it (every controller, and the dashboard over HTTPS), started on the
	// 5,000 clusters; each viewer logs in on /login with a token that may read everything.
	hubURL := "https://" + freeAddress(b)
	hub := startHub(b, env.Hub.Kubeconfig, "--dashboard-bind-address", strings.TrimPrefix(hubURL, "https://"))
	tok := token(b, env, "default", "bench-viewer", readAll)
	login := func(b *testing.B, tab context.Context) { logIn(b, tab, hubURL, tok) }
	testenv.WaitFor(b, 2*time.Minute, "the hub's dashboard", func(context.Context) (bool, string, error) {
		res, err := insecureClient.Get(hubURL + "/login")
		if err != nil {
			return false, err.Error(), nil
		}
		_ = res.Body.Close()
		return res.StatusCode == 200, res.Status, nil
	})
	w.measure(b, "hub", hub.Process.Pid, hubURL+"/fleet", login)
	path, err := rec.Write()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("record: %s", path)
}

// logIn logs the tab in on the hub's dashboard at hubURL with tok, through its /login form.
func logIn(t testing.TB, tab context.Context, hubURL, tok string) {
	t.Helper()
	run(t, tab, "the login page", chromedp.Navigate(hubURL+"/login"), chromedp.SetValue(chromedp.CSS("#token"), tok))
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	// Submitting navigates: RunResponse waits for the page it lands on.
	if _, err := chromedp.RunResponse(ctx, chromedp.Submit(chromedp.CSS("#token"))); err != nil {
		t.Fatalf("logging in: %v", err)
	}
	if got := value(t, tab, "where the login went", chromedp.Evaluate[string](`location.pathname + location.search`)); strings.HasPrefix(got, "/login") {
		t.Fatalf("logging in on %s went to %s", hubURL, got)
	}
}

// viewers measures what 10 viewers of a page cost the process that serves it.
type viewers struct {
	ctx    context.Context
	change func(time.Duration) int
	rec    *record.Record
}

// measure lets the process settle, then runs 30 s of cluster changes with no viewer (its own
// work, such as the hub's controllers reacting to them), then opens 10 viewers, each a browser
// context of its own (10 people's browsers), logged in with login when it is not nil, on page,
// and runs 30 s of changes again. The viewers' cost is the difference.
func (v viewers) measure(b *testing.B, who string, pid int, page string, login func(*testing.B, context.Context)) {
	window, settle := 30*time.Second, 20*time.Second
	if record.Smoke() {
		window, settle = 3*time.Second, 2*time.Second
	}
	time.Sleep(settle)
	rssIdle, cpu0 := procRSS(b, pid), procCPU(b, pid)
	alone := v.change(window)
	rssAlone, cpu1 := procRSS(b, pid), procCPU(b, pid)
	var tabs []context.CancelFunc
	defer func() {
		for _, cancel := range tabs {
			cancel()
		}
	}()
	for range 10 {
		tab, cancel := chromedp.NewContext(v.ctx, chromedp.WithNewBrowserContext())
		tabs = append(tabs, cancel)
		if err := chromedp.Do(tab); err != nil {
			b.Fatalf("opening a viewer: %v", err)
		}
		if login != nil {
			login(b, tab)
		}
		// A page in the background gets no animation frames: poll the DOM on a timer.
		run(b, tab, "a viewer's fleet view", chromedp.Navigate(page),
			poll(`document.querySelectorAll("tr[data-cluster]").length > 0`, 20*time.Second, chromedp.WithPollingInterval(100*time.Millisecond)))
	}
	rssOpen, cpu2 := procRSS(b, pid), procCPU(b, pid)
	watched := v.change(window)
	rssWatch, cpu3 := procRSS(b, pid), procCPU(b, pid)
	pct := func(from, to int64) float64 { return 100 * float64(to-from) / float64(clockTicks()) / window.Seconds() }
	alonePct, watchPct := pct(cpu0, cpu1), pct(cpu2, cpu3)
	b.Logf("%s: RSS %d MiB idle, %d MiB after %d changes with no viewer, %d MiB with 10 viewers open, %d MiB after %d changes they watched; CPU %.1f%% of a core with no viewer, %.1f%% with 10 (over %s each)",
		who, rssIdle>>20, rssAlone>>20, alone, rssOpen>>20, rssWatch>>20, watched, alonePct, watchPct, window)
	b.ReportMetric(float64(rssWatch-rssAlone)/(1<<20), who+"-added-MiB-10-viewers")
	b.ReportMetric(watchPct-alonePct, who+"-added-cpu-%-10-viewers")
	v.rec.Add(record.Flotilla, who+"-added-rss-10-viewers", float64(rssWatch-rssAlone)/(1<<20), "MiB", 1)
	v.rec.Add(record.Flotilla, who+"-added-cpu-10-viewers", watchPct-alonePct, "%", 1)
}

// clusterChanger returns a function that patches a label of one of the n clusters every 100 ms
// for a while and says how many it changed.
func clusterChanger(c client.Client, prefix string, n int) func(time.Duration) int {
	i := 0
	return func(d time.Duration) int {
		changes := 0
		for stop := time.Now().Add(d); time.Now().Before(stop); i++ {
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: fmt.Sprintf("%s-%05d", prefix, i%n)}, mc); err == nil {
				patch := client.MergeFrom(mc.DeepCopy())
				mc.Labels["bench-tick"] = strconv.Itoa(i)
				if err := c.Patch(context.Background(), mc, patch); err == nil {
					changes++
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		return changes
	}
}

// insecureClient talks to the hub's dashboard, whose certificate is self-signed in tests.
var insecureClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test of a self-signed loopback server

// startHub runs `flotilla hub` against kubeconfig with args until the benchmark ends.
func startHub(b testing.TB, kubeconfig string, args ...string) *exec.Cmd {
	cmd := exec.Command(flotillaBin, append([]string{"hub", "--kubeconfig", kubeconfig, "--health-probe-bind-address", "0",
		"--metrics-bind-address", "0", "--explain-bind-address", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
	})
	return cmd
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

// giveGPUs gives clusters prefix-FROM.. n of them 4 nodes of 8 H100s: the claims the agent would
// write, and a current ResourceUsage with each node's figures (0 to 8 used), 16 at a time.
func giveGPUs(b *testing.B, c client.Client, prefix string, from, n int) {
	b.Helper()
	const model = "NVIDIA-H100-80GB-HBM3"
	q := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }
	inParallel(b, "giving clusters GPUs", from, n, func(i int) error {
		name := fmt.Sprintf("%s-%05d", prefix, i)
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: clusterv1.GPUModelsClaim, Value: model}, {Name: clusterv1.GPUCountClaimName(model), Value: "32"}}
		if err := c.Status().Update(context.Background(), mc); err != nil {
			return err
		}
		if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		u := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: usagev1alpha1.ResourceUsageName}}
		if err := c.Create(context.Background(), u); err != nil {
			return err
		}
		f := usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Model: model, Capacity: q(32), Allocatable: q(32), LargestNodeAllocatable: q(8)}
		var used, free int64
		dist := map[int64]int32{}
		for j := range 4 {
			r := int64((i + 3*j) % 9)
			used += r
			free += 8 - r
			dist[8-r]++
			f.Nodes = append(f.Nodes, usagev1alpha1.NodeFigures{Name: fmt.Sprintf("gpu-%d", j), Allocatable: q(8), Requested: q(r)})
		}
		f.Requested, f.Free = q(used), q(free)
		var atLeast int32
		for a := int64(8); a > 0; a-- {
			if dist[a] > 0 {
				atLeast += dist[a]
				f.FreeNodes = append(f.FreeNodes, usagev1alpha1.NodesWithFree{Free: q(a), Nodes: atLeast})
			}
		}
		u.Status = usagev1alpha1.ResourceUsageStatus{ObservedTime: ptr.To(metav1.Now()), ValidUntil: ptr.To(metav1.NewTime(time.Now().Add(24 * time.Hour))), Nodes: 4,
			Resources: []usagev1alpha1.ResourceFigures{f}}
		return c.Status().Update(context.Background(), u)
	})
}
