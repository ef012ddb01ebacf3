//go:build integration

package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/dashboard"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
	"github.com/flotilla/flotilla/internal/local/testenv"
	dashboardassets "github.com/flotilla/flotilla/web/dashboard"
)

// browser starts headless Chromium (Debian's chromium, or $CHROMIUM) for the test.
func browser(t testing.TB) context.Context {
	t.Helper()
	exe := os.Getenv("CHROMIUM")
	if exe == "" {
		exe = "chromium"
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 900), chromedp.Flag("disable-dev-shm-usage", true),
		// Every navigation loads the page afresh, as the first-render measurements assume.
		chromedp.Flag("disable-features", "BackForwardCache"),
		// The hub's dashboard serves a self-signed certificate in tests.
		chromedp.IgnoreCertErrors)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("starting %s (install Debian's chromium, or set CHROMIUM): %v", exe, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// newWindow opens a tab in a window of its own, in the browser's default context (one network
// context, so the tabs share the browser's connections to a host as a user's tabs do).
func newWindow(t testing.TB, ctx context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx, chromedp.WithNewWindow(true))
	t.Cleanup(cancel)
	// The first call opens the tab and ties it to its context: not one with a timeout.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a window: %v", err)
	}
	return tab
}

// setWindow minimizes or restores the window of tab's page: a minimized window's page is hidden
// (document.visibilityState), as a tab behind another is.
func setWindow(t testing.TB, tab context.Context, state cdpbrowser.WindowState) {
	t.Helper()
	w, err := chromedp.Call(tab, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{})
	if err == nil {
		_, err = chromedp.Call(tab, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: w.WindowID, Bounds: &cdpbrowser.Bounds{WindowState: state}})
	}
	if err != nil {
		t.Fatalf("setting the window %s: %v", state, err)
	}
}

// run runs steps with a timeout.
func run(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs a with a timeout and returns its value.
func value[T any](t testing.TB, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// eval is a step that evaluates expr and drops its value.
func eval(expr string, opts ...chromedp.EvaluateOption) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](expr, opts...)(ctx, tg)
		return err
	})
}

// poll is a step that waits until expr is true.
func poll(expr string, timeout time.Duration, opts ...chromedp.PollOption) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := pollValue[bool](expr, timeout, opts...)(ctx, tg)
		return err
	})
}

// pollValue waits up to timeout for expr to be truthy and returns its value. A navigation still
// in flight (a redirect, or the page a form posted to) destroys the execution context chromedp's
// Poll evaluates in, and Poll then fails at once with "Cannot find context with specified id":
// pollValue polls again in the new document until the same deadline.
func pollValue[T any](expr string, timeout time.Duration, opts ...chromedp.PollOption) chromedp.Action[T] {
	return func(ctx context.Context, tg *chromedp.Target) (T, error) {
		deadline := time.Now().Add(timeout)
		for {
			left := time.Until(deadline)
			v, err := chromedp.Poll[T](expr, append(opts[:len(opts):len(opts)], chromedp.WithPollingTimeout(max(left, time.Millisecond)))...)(ctx, tg)
			if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") || time.Now().After(deadline) {
				return v, err
			}
			select {
			case <-ctx.Done():
				return v, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// texts are the trimmed text contents of the elements selector matches.
func texts(t testing.TB, ctx context.Context, selector string) []string {
	t.Helper()
	return value(t, ctx, "reading "+selector, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent.trim())`, selector)))
}

// screenshot saves the page as name.png in the test's artifact directory and, when
// FLOTILLA_DASHBOARD_SCREENSHOTS is set, in that directory (docs/dashboard for make
// dashboard-screenshots).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := value(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("FLOTILLA_DASHBOARD_SCREENSHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// axeViolation is one of axe-core's findings.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  int    `json:"nodes"`
	// Where are the first nodes' HTML, to find them.
	Where []string `json:"where"`
}

// checkAccessibility runs axe-core's WCAG 2 A and AA rules on the page and fails on any
// violation.
func checkAccessibility(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	axe, err := os.ReadFile(filepath.Join(webDir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core (npm ci in web/dashboard): %v", err)
	}
	run(t, ctx, "loading axe-core on "+page, eval(string(axe)))
	found := value(t, ctx, "axe on "+page, chromedp.Evaluate[[]axeViolation](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}})
			.then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, nodes: v.nodes.length, where: v.nodes.slice(0, 3).map(n => n.html)})))`, chromedp.EvalAwaitPromise))
	if len(found) > 0 {
		b, _ := json.MarshalIndent(found, "", "  ")
		t.Errorf("accessibility violations on %s (axe-core, WCAG 2.1 A and AA):\n%s", page, b)
	}
}

// firstRender is the time from navigation to the view's first page of data on screen, from the
// mark the app sets (Performance API).
func firstRender(t testing.TB, ctx context.Context, url, view string) time.Duration {
	t.Helper()
	run(t, ctx, "loading "+view, chromedp.Navigate(url))
	ms := value(t, ctx, "first render of "+view, pollValue[float64](fmt.Sprintf(`performance.getEntriesByName("flotilla:first-render:%s")[0]?.startTime`, view),
		20*time.Second))
	return time.Duration(ms * float64(time.Millisecond))
}

func TestBrowser(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("TestBrowser took %s", time.Since(start).Round(time.Millisecond)) }()
	f := newFixture(t)
	opts := testenv.TestHubOptions()
	opts.DashboardAddress = freeAddress(t)
	opts.DashboardAssets = dashboardassets.FS() // as flotilla hub serves them
	f.env.StartHub(t, opts)
	reader := token(t, f.env, f.ns, "reader", readAll)
	url := serve(t, "--kubeconfig", kubeconfigOf(t, f.env, "reader", reader), "--gpu-history-interval", "1s")
	ctx := browser(t)

	t.Run("a viewer logs in on the hub's dashboard with a token", func(t *testing.T) {
		hubURL := "https://" + opts.DashboardAddress
		testenv.WaitFor(t, wait, "the hub's dashboard", func(context.Context) (bool, string, error) {
			res, err := insecureClient.Get(hubURL + "/login")
			if err != nil {
				return false, err.Error(), nil
			}
			_ = res.Body.Close()
			return res.StatusCode == http.StatusOK, res.Status, nil
		})
		tab, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
		defer cancel()
		if err := chromedp.Do(tab); err != nil {
			t.Fatal(err)
		}
		logIn(t, tab, hubURL, reader)
		firstRender(t, tab, hubURL+"/fleet", "fleet")
		if got := texts(t, tab, fmt.Sprintf(`tr[data-cluster=%q] th`, f.gpuCluster)); !slices.Equal(got, []string{f.gpuCluster}) {
			t.Errorf("the hub's fleet view after logging in shows %q for %s", got, f.gpuCluster)
		}
	})

	t.Run("each view shows what the API holds", func(t *testing.T) {
		var clusters dashboard.Page[fleetview.Cluster]
		getJSON(t, url+"/api/clusters", "", &clusters)
		var want []string
		for _, c := range clusters.Items {
			want = append(want, c.Name)
		}
		firstRender(t, ctx, url+"/fleet", "fleet")
		if diff := cmp.Diff(want, texts(t, ctx, "tr[data-cluster] th")); diff != "" {
			t.Errorf("fleet view's clusters against GET /api/clusters (-want +got):\n%s", diff)
		}
		row := texts(t, ctx, fmt.Sprintf(`tr[data-cluster=%q] td`, f.gpuCluster))
		if len(row) < 8 || !strings.HasPrefix(row[0], "True") || !strings.Contains(row[1], "ago") || !strings.Contains(row[6], "NVIDIA-H100-80GB-HBM3=16") || row[7] != "v1.37.2" {
			t.Errorf("fleet row of %s = %q, want available, a heartbeat, 16 H100s and v1.37.2", f.gpuCluster, row)
		}
		screenshot(t, ctx, "fleet")
		checkAccessibility(t, ctx, "/fleet")

		firstRender(t, ctx, url+"/gpus", "gpus")
		gpu := texts(t, ctx, fmt.Sprintf(`tr[data-cluster=%q] td`, f.gpuCluster))
		if diff := cmp.Diff([]string{"NVIDIA-H100-80GB-HBM3", "16", "8", "8", "4", "2×≥4", "current"}, gpu); diff != "" {
			t.Errorf("GPU row of %s (model, allocatable, used, free, largest free block, nodes, figures) (-want +got):\n%s", f.gpuCluster, diff)
		}
		screenshot(t, ctx, "gpus")
		checkAccessibility(t, ctx, "/gpus")

		testenv.WaitFor(t, wait, "the placement's decision", func(context.Context) (bool, string, error) {
			var p dashboard.Page[fleetview.Placement]
			getJSON(t, url+"/api/placements?namespace="+f.ns, "", &p)
			return len(p.Items) == 1 && len(p.Items[0].Decisions) == 1, fmt.Sprint(p.Items), nil
		})
		firstRender(t, ctx, url+"/placements", "placements")
		if got := texts(t, ctx, fmt.Sprintf(`tr[data-placement="%s/gpu"] td.decisions`, f.ns)); !slices.Equal(got, []string{f.gpuCluster}) {
			t.Errorf("placements view's decisions of %s/gpu = %q, want %s", f.ns, got, f.gpuCluster)
		}
		screenshot(t, ctx, "placements")
		checkAccessibility(t, ctx, "/placements")

		firstRender(t, ctx, url+"/works?", "works")
		var works dashboard.Page[dashboard.WorkRow]
		getJSON(t, url+"/api/works", "", &works)
		var wantWorks []string
		for _, w := range works.Items {
			wantWorks = append(wantWorks, w.Name)
		}
		if diff := cmp.Diff(wantWorks, texts(t, ctx, "tr[data-work] th")); diff != "" {
			t.Errorf("works view against GET /api/works (-want +got):\n%s", diff)
		}
		screenshot(t, ctx, "works")
		checkAccessibility(t, ctx, "/works")

		firstRender(t, ctx, url+"/addons", "addons")
		screenshot(t, ctx, "addons")
		checkAccessibility(t, ctx, "/addons")
		firstRender(t, ctx, url+"/jobs", "jobs")
		if got := strings.Join(texts(t, ctx, "main section > p"), " "); !strings.Contains(got, "Kueue is not installed on the hub") {
			t.Errorf("jobs view without Kueue says %q, want that Kueue is not installed", got)
		}
		screenshot(t, ctx, "jobs")
		checkAccessibility(t, ctx, "/jobs")
	})

	t.Run("the policies grid shows each cluster's compliance, live", func(t *testing.T) {
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "gpu-baseline"}, Spec: policyv1.PolicySpec{
			RemediationAction: "inform", PolicyTemplates: []*policyv1.PolicyTemplate{}}}
		testenv.Create(t, f.c, root)
		testenv.Create(t, f.c, &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "gpu-baseline"},
			PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "gpu"},
			Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: root.Name}}})
		// The cluster's framework would report; here the test does, on the hub's copy.
		report := func(state policyv1.ComplianceState) {
			testenv.WaitFor(t, wait, "the copy on "+f.gpuCluster, func(ctx context.Context) (bool, string, error) {
				cp := &policyv1.Policy{}
				if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.gpuCluster, Name: f.ns + ".gpu-baseline"}, cp); err != nil {
					return false, "", client.IgnoreNotFound(err)
				}
				cp.Status.ComplianceState = state
				return f.c.Status().Update(ctx, cp) == nil, "", nil
			})
		}
		report(policyv1.Compliant)
		cell := fmt.Sprintf(`tr[data-policy="%s/gpu-baseline"] td[data-cluster=%q]`, f.ns, f.gpuCluster)
		firstRender(t, ctx, url+"/policies", "policies")
		run(t, ctx, "marking the page", eval(`window.notReloaded = true`))
		run(t, ctx, "waiting for the compliant cell", poll(fmt.Sprintf(`document.querySelector(%q)?.textContent === "✓ Compliant"`, cell), 30*time.Second))
		screenshot(t, ctx, "policies")
		checkAccessibility(t, ctx, "/policies")
		report(policyv1.NonCompliant)
		run(t, ctx, "waiting for the non-compliant cell without a reload", poll(fmt.Sprintf(
			`document.querySelector(%q)?.textContent === "✗ NonCompliant" && window.notReloaded === true`, cell), 30*time.Second))
		if got := texts(t, ctx, fmt.Sprintf(`tr[data-policy="%s/gpu-baseline"] td`, f.ns)); len(got) < 2 || got[1] != "NonCompliant" {
			t.Errorf("the policy's row = %q, want its compliance NonCompliant", got)
		}

		// The cell opens the explanation: the cluster's copy says which object differs, and how.
		testenv.WaitFor(t, wait, "details on the copy", func(ctx context.Context) (bool, string, error) {
			cp := &policyv1.Policy{}
			if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.gpuCluster, Name: f.ns + ".gpu-baseline"}, cp); err != nil {
				return false, "", err
			}
			cp.Status.Details = []*policyv1.DetailsPerTemplate{{TemplateMeta: metav1.ObjectMeta{Name: "region"}, ComplianceState: policyv1.NonCompliant,
				History: []policyv1.ComplianceHistory{{LastTimestamp: metav1.Now(), Message: "NonCompliant; violation - configmaps [region] found but not as specified"}},
				RelatedObjects: []policyv1.RelatedObject{{Object: policyv1.ObjectResource{Kind: "ConfigMap", Metadata: policyv1.ObjectMetadata{Namespace: "kube-public", Name: "region"}},
					Compliant: "NonCompliant", Reason: "Resource found but does not match", Properties: &policyv1.ObjectProperties{UID: "u1", Diff: "data.region is us-east, want eu-west"}}}}}
			return f.c.Status().Update(ctx, cp) == nil, "", nil
		})
		run(t, ctx, "opening the cell", chromedp.Click(chromedp.CSS(cell+" a")))
		run(t, ctx, "waiting for the differences", poll(`document.querySelector('tr[data-object="ConfigMap kube-public/region"] ul.diff li')?.textContent === "data.region is us-east, want eu-west"`, 20*time.Second))
		screenshot(t, ctx, "policy-cluster")
		checkAccessibility(t, ctx, "/policies/NS/NAME/CLUSTER")
	})

	t.Run("the GPU map draws each node's GPUs, live", func(t *testing.T) {
		// cells counts the map's cells of a node in a state, from the titles Plot gives them.
		cells := func(node, state string) string {
			return fmt.Sprintf(`[...document.querySelectorAll("g.gpu-%s rect")].filter(r => r.querySelector("title")?.textContent.startsWith(%q)).length`, state, node+" ")
		}
		firstRender(t, ctx, url+"/gpus", "gpus")
		row := f.gpuCluster + " · NVIDIA-H100-80GB-HBM3"
		if got := value(t, ctx, "the fleet bar's label", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".focusable rect")].map(r => r.getAttribute("aria-label"))`)); !slices.Contains(got, row+": 8 of 16 GPUs used, 8 free, at most 4 free on one node") {
			t.Errorf("the fleet's GPU bars say %q, want %s with 8 of 16 used", got, row)
		}
		run(t, ctx, "opening the cluster", chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-cluster=%q] th a`, f.gpuCluster))))
		run(t, ctx, "waiting for the node map", poll(`document.querySelectorAll("g.gpu-used rect").length > 0`, 20*time.Second))
		run(t, ctx, "marking the page", eval(`window.notReloaded = true`))
		want := map[string]int{"h-0 used": 4, "h-0 free": 4, "h-1 used": 4, "h-1 free": 4}
		got := map[string]int{}
		for k := range want {
			node, state, _ := strings.Cut(k, " ")
			got[k] = value(t, ctx, "counting "+k, chromedp.Evaluate[int](cells(node, state)))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cells per node and state, against the ResourceUsage's 4 of 8 used on each node (-want +got):\n%s", diff)
		}
		screenshot(t, ctx, "gpu-map")
		checkAccessibility(t, ctx, "/gpus/CLUSTER")
		run(t, ctx, "focusing the first node", eval(`document.querySelector(".focusable rect").focus()`))
		if got := texts(t, ctx, "figure.chart figcaption"); len(got) == 0 || got[0] != "node h-0: 4 of 8 GPUs used, 4 free" {
			t.Errorf("with h-0 focused the chart's caption says %q, want its figures", got)
		}

		// A job takes h-0's last 4 GPUs: the map shows it without a reload.
		u := &usagev1alpha1.ResourceUsage{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.gpuCluster, Name: usagev1alpha1.ResourceUsageName}, u); err != nil {
			t.Fatal(err)
		}
		writeStatus(t, f.c, u, func(u *usagev1alpha1.ResourceUsage) {
			r := &u.Status.Resources[0]
			r.Requested, r.Free = resource.MustParse("12"), resource.MustParse("4")
			r.FreeNodes = []usagev1alpha1.NodesWithFree{{Free: resource.MustParse("4"), Nodes: 1}}
			r.Nodes[0].Requested = resource.MustParse("8")
		})
		run(t, ctx, "waiting for h-0's 8 used cells without a reload", poll(fmt.Sprintf(`%s === 8 && %s === 0 && %s === 4 && window.notReloaded === true`,
			cells("h-0", "used"), cells("h-0", "free"), cells("h-1", "used")), 30*time.Second))

		// Free GPUs over time: the history (a sample a second here) has seen 8 free, then 4.
		run(t, ctx, "the GPU view", chromedp.Navigate(url+"/gpus"))
		alt := `(document.querySelector('.over-time[data-model="NVIDIA-H100-80GB-HBM3"] p.alt')?.textContent ?? "")`
		run(t, ctx, "waiting for the over-time chart to reach 4 free", poll(fmt.Sprintf(`%s.includes("free now 4, least 4, most 8") && document.querySelectorAll('.over-time g.line-free path').length === 1`, alt), 30*time.Second))
		before := value(t, ctx, "the chart's points", chromedp.Evaluate[string](alt))
		run(t, ctx, "waiting for a new sample without a reload", eval(`window.notReloaded = true`),
			poll(fmt.Sprintf(`%s !== %q && window.notReloaded === true`, alt, before), 30*time.Second))
		screenshot(t, ctx, "gpus")
		checkAccessibility(t, ctx, "/gpus with charts")
	})

	t.Run("a cut cluster's timeline gains its stages in order, live", func(t *testing.T) {
		// A cluster of its own set under a FailoverPolicy (lease 1 s, fence after 2 s, lost after
		// 8 s) whose agent renewed once and never again: the hub really declares it lost.
		name, set := f.env.Namespace(t, f.env.Hub), "cut-"+f.ns
		testenv.Create(t, f.c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set}},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		testenv.Create(t, f.c, mc)
		writeStatus(t, f.c, mc, func(mc *clusterv1.ManagedCluster) {
			mc.Status.Conditions = append(mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
				Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "Managed cluster is available", LastTransitionTime: metav1.Now()})
		})
		// The lease says it is renewed every second, as an agent that read the policy's timing does.
		testenv.Create(t, f.c, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: clusterv1.ManagedClusterLeaseName},
			Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: time.Now()}, LeaseDurationSeconds: ptr.To[int32](1)}})
		firstRender(t, ctx, url+"/fleet/"+name, "cluster")
		run(t, ctx, "marking the page", eval(`window.notReloaded = true`))
		testenv.Create(t, f.c, &failoverv1alpha1.FailoverPolicy{ObjectMeta: metav1.ObjectMeta{Name: set},
			Spec: failoverv1alpha1.FailoverPolicySpec{ClusterSet: set, LeaseDurationSeconds: 1, FenceAfterSeconds: 2, LostAfterSeconds: 8}})
		stages := `[...document.querySelectorAll("tr[data-stage]")].map(r => r.dataset.stage).join(" ")`
		testenv.WaitFor(t, 60*time.Second, "the hub to declare "+name+" lost", func(ctx context.Context) (bool, string, error) {
			var tl fleetview.Timeline
			getJSON(t, url+"/api/clusters/"+name+"/timeline", "", &tl)
			got := &clusterv1.ManagedCluster{}
			if err := f.c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
				return false, "", err
			}
			return slices.ContainsFunc(tl.Events, func(e fleetview.TimelineEvent) bool { return e.Stage == fleetview.StageLost }),
				fmt.Sprintf("timeline %+v; annotations %v", tl, got.Annotations), nil
		})
		run(t, ctx, "waiting for the page to show the loss, without a reload", poll(fmt.Sprintf(`%s.includes("lost") && window.notReloaded === true`, stages), 20*time.Second))
		got := strings.Fields(value(t, ctx, "the stages", chromedp.Evaluate[string](stages)))
		for _, want := range [][2]string{{"heartbeat", "fence"}, {"fence", "lost"}, {"heartbeat", "lost"}} {
			i, j := slices.Index(got, want[0]), slices.Index(got, want[1])
			if i < 0 || j < 0 || i > j {
				t.Errorf("timeline stages %q: want %s before %s", got, want[0], want[1])
			}
		}
		if n := value(t, ctx, "counting the chart's stages", chromedp.Evaluate[int](`document.querySelectorAll("figure.chart .focusable circle").length`)); n != len(got) {
			t.Errorf("the timeline chart draws %d stages, the table has %d", n, len(got))
		}
		screenshot(t, ctx, "cluster-timeline")
		checkAccessibility(t, ctx, "/fleet/CLUSTER")
	})

	t.Run("a label change appears in the placements view without a reload", func(t *testing.T) {
		firstRender(t, ctx, fmt.Sprintf("%s/placements/%s/gpu", url, f.ns), "placement")
		run(t, ctx, "marking the page", eval(`window.notReloaded = true`))
		if got := texts(t, ctx, "span.decisions"); !slices.Equal(got, []string{f.gpuCluster}) {
			t.Fatalf("explanation's selection = %q, want %s", got, f.gpuCluster)
		}
		screenshot(t, ctx, "placement-explain")
		checkAccessibility(t, ctx, "/placements/NS/NAME")
		relabel(t, f.c, f.gpuCluster, "gpu", "")
		relabel(t, f.c, f.cpu, "gpu", "h100")
		run(t, ctx, "waiting for the new selection", poll(fmt.Sprintf(`document.querySelector("span.decisions")?.textContent === %q && window.notReloaded === true`, f.cpu), 20*time.Second))
		run(t, ctx, "the placements list", chromedp.Navigate(url+"/placements"), eval(`window.notReloaded = true`))
		run(t, ctx, "waiting for the hub's new decision in the list", poll(fmt.Sprintf(`document.querySelector('tr[data-placement="%s/gpu"] td.decisions')?.textContent === %q && window.notReloaded === true`, f.ns, f.cpu), 30*time.Second))
	})

	t.Run("what-if", func(t *testing.T) {
		firstRender(t, ctx, fmt.Sprintf("%s/placements/%s/gpu", url, f.ns), "placement")
		// The score chart draws every cluster that passed the filters, with the explanation's total.
		var ex dashboard.Explanation
		getJSON(t, fmt.Sprintf("%s/api/placements/%s/gpu", url, f.ns), "", &ex)
		var wantBars []string
		for _, c := range ex.Explanation.Clusters {
			if c.FilteredBy == "" {
				wantBars = append(wantBars, fmt.Sprintf("%s: total %d", c.Name, c.TotalScore))
			}
		}
		bars := func(sel string) []string {
			return value(t, ctx, "reading "+sel, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(r => r.getAttribute("aria-label"))`, sel)))
		}
		var gotBars []string
		for _, l := range bars("figure.chart .focusable rect") {
			name, _, _ := strings.Cut(l, ",")
			gotBars = append(gotBars, name)
		}
		if len(wantBars) == 0 || !cmp.Equal(wantBars, gotBars) {
			t.Errorf("score bars %q, want one per cluster that passed the filters with its total, %q", gotBars, wantBars)
		}
		if n := value(t, ctx, "counting segments", chromedp.Evaluate[int](`document.querySelectorAll("figure.chart g[aria-label=bar] rect title").length`)); n == 0 {
			t.Errorf("the score chart has no prioritizer segments")
		}
		yaml := value(t, ctx, "reading the editor", chromedp.Value(chromedp.CSS("#whatif-yaml")))
		edited := strings.Replace(yaml, "numberOfClusters: 1", "numberOfClusters: 2", 1)
		edited = strings.Replace(edited, "gpu: h100", "{}", 1)
		edited = strings.Replace(edited, "matchLabels:\n", "matchLabels: ", 1)
		run(t, ctx, "simulating", chromedp.SetValue(chromedp.CSS("#whatif-yaml"), edited), eval(`document.querySelector("#whatif-yaml").dispatchEvent(new Event("input", {bubbles: true}))`),
			chromedp.Click(chromedp.CSS(`form.whatif button`)), chromedp.WaitVisible(chromedp.CSS("span.whatif-decisions")))
		want := []string{f.cpu, f.gpuCluster}
		slices.Sort(want)
		got := strings.Split(texts(t, ctx, "span.whatif-decisions")[0], ", ")
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("what-if selection (-want +got):\n%s", diff)
		}
		// The what-if is drawn against the current decision, cluster by cluster.
		// The figure is rendered first and its SVG drawn into it just after (chart.tsx's effect).
		run(t, ctx, "waiting for the what-if chart", poll(`document.querySelectorAll("figure.chart").length === 2 && document.querySelectorAll("figure.chart:last-of-type .focusable rect").length > 0`, 10*time.Second))
		compared := bars("figure.chart:last-of-type .focusable rect")
		wantCompared := []string{f.gpuCluster + ", what if: selected", f.cpu + ", what if: selected"}
		for _, d := range ex.Explanation.Decisions {
			wantCompared = append(wantCompared, d.ClusterName+", now: selected")
		}
		for _, w := range wantCompared {
			if !slices.ContainsFunc(compared, func(l string) bool { return strings.HasPrefix(l, w) }) {
				t.Errorf("the what-if chart says %q, want %q", compared, w)
			}
		}
		screenshot(t, ctx, "placement-whatif")
		checkAccessibility(t, ctx, "/placements/NS/NAME with a what-if")
	})

	t.Run("a viewer without rights to a namespace does not see its works", func(t *testing.T) {
		viewer := token(t, f.env, f.ns, "works-viewer", []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"},
			Resources: []string{"manifestworks", "manifestworkreplicasets"}, Verbs: []string{"get", "list", "watch"}}}, f.gpuCluster)
		vurl := serve(t, "--kubeconfig", kubeconfigOf(t, f.env, "works-viewer", viewer))
		show := func(ns string) {
			run(t, ctx, "works of "+ns, chromedp.Navigate(vurl+"/works"), chromedp.WaitVisible(chromedp.CSS("#works-ns")),
				chromedp.SendKeys(chromedp.CSS("#works-ns"), ns), chromedp.Click(chromedp.CSS(`form.filter button`)))
		}
		show(f.gpuCluster)
		run(t, ctx, "the viewer's works", chromedp.WaitVisible(chromedp.CSS(`tr[data-work]`)))
		if diff := cmp.Diff([]string{"train"}, texts(t, ctx, "tr[data-work] th")); diff != "" {
			t.Errorf("works of %s the viewer sees (-want +got):\n%s", f.gpuCluster, diff)
		}
		show(f.cpu)
		run(t, ctx, "the refusal", poll(fmt.Sprintf(`[...document.querySelectorAll("p[role=alert]")].some(e => e.textContent.includes("listing manifestworks in namespace %s"))`, f.cpu), 20*time.Second))
		if got := texts(t, ctx, "tr[data-work] th"); len(got) > 0 {
			t.Errorf("works of %s shown to a viewer without rights there: %q", f.cpu, got)
		}
		if alert := strings.Join(texts(t, ctx, "p[role=alert]"), " "); !strings.Contains(alert, "permission denied") {
			t.Errorf("the works view says %q, want the refusal", alert)
		}
		screenshot(t, ctx, "works-forbidden")
	})

	t.Run("with Kueue, the jobs view places pending workloads in their queue", func(t *testing.T) {
		f.env.InstallKueueCRDs(t)
		testenv.Create(t, f.c, &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "q"},
			Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "dash-cq"}})
		// Created in the same second: the higher priority goes first, not the older.
		for _, w := range []struct {
			name     string
			priority int32
		}{{"wl-a", 0}, {"wl-b", 10}} {
			testenv.Create(t, f.c, &kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: w.name},
				Spec: kueuev1beta2.WorkloadSpec{QueueName: "q", Priority: ptr.To(w.priority), PodSets: []kueuev1beta2.PodSet{{Name: "main", Count: 1,
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "trainer"}}}}}}}})
		}
		testenv.WaitFor(t, wait, "GET /api/jobs to place both workloads", func(context.Context) (bool, string, error) {
			var p struct {
				Items []struct {
					Name       string           `json:"name"`
					QueuePlace *fleetview.Place `json:"queuePlace"`
				} `json:"items"`
			}
			getJSON(t, url+"/api/jobs?namespace="+f.ns, "", &p)
			return len(p.Items) == 2 && p.Items[0].QueuePlace != nil && p.Items[1].QueuePlace != nil, fmt.Sprintf("%+v", p.Items), nil
		})
		firstRender(t, ctx, url+"/jobs?namespace="+f.ns, "jobs")
		if diff := cmp.Diff([]string{"2 of 2", "1 of 2"}, texts(t, ctx, "main section table tbody tr td:nth-of-type(2) .position")); diff != "" {
			t.Errorf("jobs view's positions of wl-a, wl-b (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{f.ns + "/wl-b (priority 10)"}, texts(t, ctx, "main section table tbody tr td:nth-of-type(2) ol.ahead li")); diff != "" {
			t.Errorf("jobs view's workloads ahead (only wl-b, ahead of wl-a) (-want +got):\n%s", diff)
		}
		screenshot(t, ctx, "jobs-kueue")
		checkAccessibility(t, ctx, "/jobs")
	})

	t.Run("the queue view goes only to viewers who may read every team's workloads", func(t *testing.T) {
		f.env.InstallKueueCRDs(t)
		// The API as the hub serves it, each request with the viewer's own token.
		url, history := hubDashboard(t, f.env)
		nobody := token(t, f.env, f.ns, "queue-nobody", nil)
		worksViewer := token(t, f.env, f.ns, "queue-works-viewer", []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"},
			Resources: []string{"manifestworks"}, Verbs: []string{"get", "list", "watch"}}}, f.gpuCluster)
		name := "fq-api-" + f.ns
		fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: queuev1alpha1.FleetQueueSpec{AdmissionCheck: "mk",
			Teams: []queuev1alpha1.Team{{Name: "a", Namespace: f.ns, Weight: resource.MustParse("1")}}}}
		testenv.Create(t, f.c, fq)
		writeStatus(t, f.c, fq, func(fq *queuev1alpha1.FleetQueue) {
			fq.Status.Models = []queuev1alpha1.ModelQuota{{Model: "H100", Flavor: fleetqueue.FlavorName(name, "h100"), GPUs: 8}}
		})
		cq := &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: fleetqueue.ClusterQueueName(name, "a"), Labels: map[string]string{fleetqueue.FleetQueueLabel: name}},
			Spec: kueuev1beta2.ClusterQueueSpec{CohortName: kueuev1beta2.CohortReference(name), NamespaceSelector: &metav1.LabelSelector{}}}
		testenv.Create(t, f.c, cq)
		writeStatus(t, f.c, cq, func(cq *kueuev1beta2.ClusterQueue) {
			cq.Status.FlavorsReservation = []kueuev1beta2.FlavorUsage{{Name: kueuev1beta2.ResourceFlavorReference(fleetqueue.FlavorName(name, "h100")),
				Resources: []kueuev1beta2.ResourceUsage{{Name: usagev1alpha1.ResourceNvidiaGPU, Total: resource.MustParse("3")}}}}
		})
		if err := history.Sample(context.Background()); err != nil {
			t.Fatal(err)
		}
		var page dashboard.QueuesPage
		if code, body := getJSON(t, url+"/api/queues", reader, &page); code != http.StatusOK {
			t.Fatalf("queues as the reader = %d %s", code, body)
		}
		i := slices.IndexFunc(page.Queues, func(q dashboard.QueueRow) bool { return q.Name == name })
		if i < 0 {
			t.Fatalf("queues = %+v, want %s", page, name)
		}
		q := page.Queues[i]
		// Team a holds 3 and asks nothing more: its fair share is what it holds. (Earlier samples,
		// before the FleetQueue, count zero.)
		var last []dashboard.SharePoint
		for _, s := range q.History {
			if len(s.Points) > 0 {
				last = append(last, s.Points[len(s.Points)-1])
			}
		}
		if diff := cmp.Diff([]dashboard.SharePoint{{Used: 3, Fair: 3}}, last, cmpopts.IgnoreFields(dashboard.SharePoint{}, "Time")); diff != "" || !page.Served || q.Teams[0].Used["H100"] != 3 {
			t.Errorf("queue %s: teams %+v, the history's last sample (-want +got):\n%s", name, q.Teams, diff)
		}
		for who, tok := range map[string]string{"no rights": nobody, "works of one namespace": worksViewer} {
			code, body := getJSON(t, url+"/api/queues", tok, nil)
			if code != http.StatusForbidden || !strings.Contains(body, "the queue view needs the right to list fleetqueues, clusterqueues, and localqueues and workloads in all namespaces") || strings.Contains(body, name) {
				t.Errorf("queues as a viewer with %s = %d %s, want 403 saying who may see them", who, code, body)
			}
		}
		// A workload's page is read as the viewer too: no rights, no workload.
		if code, body := getJSON(t, url+"/api/jobs/"+f.ns+"/wl-a", nobody, nil); code != http.StatusForbidden || !strings.Contains(body, "permission denied") || strings.Contains(body, "QuotaReserved") {
			t.Errorf("a workload's page as a viewer without rights = %d %s, want 403 naming the refusal", code, body)
		}
		for path, want := range map[string]string{"/api/jobs/" + f.ns + "/Not_A_Name": `name \"Not_A_Name\" is not a valid name`, "/api/jobs/" + f.ns + "/none": `\"none\" not found`} {
			if code, body := getJSON(t, url+path, reader, nil); code != http.StatusNotFound || !strings.Contains(body, want) {
				t.Errorf("GET %s = %d %s, want 404 saying %s", path, code, body, want)
			}
		}
	})

	t.Run("the queue view draws each team against its fair share, and a workload's timeline, live", func(t *testing.T) {
		f.env.InstallKueueCRDs(t)
		name, teamB := "fq-"+f.ns, f.env.Namespace(t, f.env.Hub)
		const h100 = "NVIDIA-H100-80GB-HBM3"
		fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: queuev1alpha1.FleetQueueSpec{AdmissionCheck: "mk", Reclaim: "Never",
			Teams: []queuev1alpha1.Team{{Name: "a", Namespace: f.ns, LocalQueue: "fq-a", Weight: resource.MustParse("1")}, {Name: "b", Namespace: teamB, Weight: resource.MustParse("1")}}}}
		testenv.Create(t, f.c, fq)
		writeStatus(t, f.c, fq, func(fq *queuev1alpha1.FleetQueue) {
			fq.Status.Workers = 2
			fq.Status.Models = []queuev1alpha1.ModelQuota{{Model: h100, Flavor: fleetqueue.FlavorName(name, "h100"), GPUs: 16, Workers: []string{"w1", "w2"}}}
			fq.Status.Conditions = []metav1.Condition{{Type: queuev1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: queuev1alpha1.ReasonApplied, LastTransitionTime: metav1.Now()}}
		})
		// The hub's Kueue is not running here: the test writes what it would (each team's
		// ClusterQueue and what it holds), and the view must draw what the API holds.
		cqs := map[string]*kueuev1beta2.ClusterQueue{}
		for _, team := range fq.Spec.Teams {
			cq := &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: fleetqueue.ClusterQueueName(name, team.Name), Labels: map[string]string{fleetqueue.FleetQueueLabel: name}},
				Spec: kueuev1beta2.ClusterQueueSpec{CohortName: kueuev1beta2.CohortReference(name), NamespaceSelector: &metav1.LabelSelector{}}}
			testenv.Create(t, f.c, cq)
			cqs[team.Name] = cq
			testenv.Create(t, f.c, &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: team.Namespace, Name: fleetqueue.LocalQueueName(team)},
				Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuev1beta2.ClusterQueueReference(cq.Name)}})
		}
		hold := func(team string, gpus int64) {
			writeStatus(t, f.c, cqs[team], func(cq *kueuev1beta2.ClusterQueue) {
				cq.Status.FlavorsReservation = []kueuev1beta2.FlavorUsage{{Name: kueuev1beta2.ResourceFlavorReference(fleetqueue.FlavorName(name, "h100")),
					Resources: []kueuev1beta2.ResourceUsage{{Name: usagev1alpha1.ResourceNvidiaGPU, Total: *resource.NewQuantity(gpus, resource.DecimalSI)}}}}
			})
		}
		hold("a", 12)
		pending := func(ns, queue, wl string, pods int32, perPod int64, model string) *kueuev1beta2.Workload {
			spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "trainer", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: *resource.NewQuantity(perPod, resource.DecimalSI)},
				Limits:   corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: *resource.NewQuantity(perPod, resource.DecimalSI)}}}}}
			if model != "" {
				spec.NodeSelector = map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: model}
			}
			w := &kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: wl},
				Spec: kueuev1beta2.WorkloadSpec{QueueName: kueuev1beta2.LocalQueueName(queue), PodSets: []kueuev1beta2.PodSet{{Name: "workers", Count: pods, Template: corev1.PodTemplateSpec{Spec: spec}}}}}
			testenv.Create(t, f.c, w)
			return w
		}
		gang := pending(teamB, "user-queue", "gang", 2, 4, h100)
		time.Sleep(1100 * time.Millisecond) // the queue orders by creation, to the second
		pending(teamB, "user-queue", "late", 1, 1, h100)
		pending(f.ns, "fq-a", "more", 4, 1, h100)

		// Team a holds 12 and wants 16, team b wants 9: of 16 H100s, each fairly gets 8.
		firstRender(t, ctx, url+"/queues", "queues")
		run(t, ctx, "marking the page", eval(`window.notReloaded = true`))
		dot := func(label string) string {
			return fmt.Sprintf(`document.querySelector('section[data-queue=%q] circle[aria-label^=%q]')`, name, label)
		}
		run(t, ctx, "team a drawn over its share, team b under", poll(fmt.Sprintf(`(() => {
			const a = %s, af = %s, b = %s, bf = %s;
			return a && af && b && bf && +a.getAttribute("cy") < +af.getAttribute("cy") && +b.getAttribute("cy") > +bf.getAttribute("cy");
		})()`, dot("team a: holds 12 "+h100+" GPUs, fair share 8 (over its share by 4)"), dot("team a: fair share 8 "),
			dot("team b: holds 0 "+h100+" GPUs, fair share 8 (under its share by 8)"), dot("team b: fair share 8 ")), 20*time.Second))
		if diff := cmp.Diff([]string{"12 / 8"}, texts(t, ctx, fmt.Sprintf(`section[data-queue=%q] tr[data-team=a] td.over`, name))); diff != "" {
			t.Errorf("team a's row (held / fair, bold over its share) (-want +got):\n%s", diff)
		}
		got := texts(t, ctx, fmt.Sprintf(`section[data-queue=%q] div.team-queue[data-team=b] ol.pending li`, name))
		if len(got) != 2 || !strings.HasPrefix(got[0], teamB+"/gang: 2 pods, 8 "+h100) || !strings.HasPrefix(got[1], teamB+"/late: 1 pod, 1 "+h100) {
			t.Errorf("team b's pending workloads = %q, want gang (2 pods, 8 GPUs) then late (1 pod, 1 GPU), in queue order", got)
		}
		if n := value(t, ctx, "team b's queue bars", pollValue[int](fmt.Sprintf(`document.querySelectorAll('section[data-queue=%q] div.team-queue[data-team=b] .pending-bar rect').length`, name), 5*time.Second)); n != 2 {
			t.Errorf("team b's queue chart draws %d bars, want 2", n)
		}
		screenshot(t, ctx, "queues")
		checkAccessibility(t, ctx, "/queues")

		// Team b's gang gets its 8 GPUs: the chart follows without a reload.
		hold("b", 8)
		run(t, ctx, "team b at its share, live", poll(fmt.Sprintf(`%s !== null && window.notReloaded === true`, dot("team b: holds 8 "+h100+" GPUs, fair share 8 (at its share)")), 30*time.Second))

		// A workload's own timeline: submitted, then quota reserved as Kueue writes it.
		run(t, ctx, "opening the gang's page", chromedp.Click(chromedp.CSS(fmt.Sprintf(`li[data-workload=%q] a`, teamB+"/gang"))),
			poll(`document.querySelector("tr[data-stage=submitted]") !== null`, 20*time.Second), eval(`window.notReloaded = true`))
		writeStatus(t, f.c, gang, func(w *kueuev1beta2.Workload) {
			w.Status.Conditions = []metav1.Condition{{Type: kueuev1beta2.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
				Message: "Quota reserved in ClusterQueue " + cqs["b"].Name, LastTransitionTime: metav1.NewTime(time.Now().Add(time.Second))}}
		})
		run(t, ctx, "the timeline gains quota reserved, live", poll(`document.querySelector("tr[data-stage=quota-reserved]") !== null && window.notReloaded === true`, 30*time.Second))
		if diff := cmp.Diff([]string{"submitted", "quota reserved"}, texts(t, ctx, "tr[data-stage] td:nth-of-type(2)")); diff != "" {
			t.Errorf("the gang's stages, oldest first (-want +got):\n%s", diff)
		}
		if n := value(t, ctx, "the timeline's dots", pollValue[int](`document.querySelectorAll("figure.chart g.focusable circle").length`, 5*time.Second)); n != 2 {
			t.Errorf("the gang's timeline draws %d moments, want 2", n)
		}
		screenshot(t, ctx, "job-timeline")
		checkAccessibility(t, ctx, "/jobs/"+teamB+"/gang")
	})

	// Over HTTP/1.1 a browser opens at most six connections to a host and each live stream holds
	// one, so without closing the streams of hidden pages the seventh tab would never load.
	t.Run("any number of tabs: only those on screen hold a live stream", func(t *testing.T) {
		run(t, ctx, "leaving the first tab's page", chromedp.Navigate("about:blank"))
		page := fmt.Sprintf("%s/placements/%s/gpu", url, f.ns)
		var hidden []context.Context
		for i := range 8 {
			tab := newWindow(t, ctx)
			firstRender(t, tab, page, "placement")
			run(t, tab, fmt.Sprintf("marking tab %d", i), eval(`window.notReloaded = true`))
			setWindow(t, tab, cdpbrowser.WindowStateMinimized)
			run(t, tab, fmt.Sprintf("tab %d hidden", i), poll(`document.visibilityState === "hidden"`, 5*time.Second))
			hidden = append(hidden, tab)
		}
		front := newWindow(t, ctx)
		firstRender(t, front, page, "placement")
		run(t, front, "marking the page", eval(`window.notReloaded = true`))
		relabel(t, f.c, f.cpu, "gpu", "")
		relabel(t, f.c, f.gpuCluster, "gpu", "h100")
		run(t, front, "the tab on screen shows the new selection live", poll(fmt.Sprintf(`document.querySelector("span.decisions")?.textContent === %q && window.notReloaded === true`, f.gpuCluster), 30*time.Second))
		// A hidden tab heard nothing meanwhile; shown again, it refetches.
		setWindow(t, hidden[0], cdpbrowser.WindowStateNormal)
		run(t, hidden[0], "a tab shown again catches up without a reload", poll(fmt.Sprintf(`document.querySelector("span.decisions")?.textContent === %q && window.notReloaded === true`, f.gpuCluster), 30*time.Second))
	})

	t.Run("the fleet view's first render with 1,000 clusters", func(t *testing.T) {
		prefix := "perf-" + f.ns
		createClusters(t, f.c, prefix, 1000, map[string]string{"dashboard-test": prefix})
		var fleet, gpus []time.Duration
		for range 3 {
			fleet = append(fleet, firstRender(t, ctx, url+"/fleet", "fleet"))
			gpus = append(gpus, firstRender(t, ctx, url+"/gpus", "gpus"))
		}
		slices.Sort(fleet)
		slices.Sort(gpus)
		t.Logf("first render with 1,000+ clusters, median of 3: fleet %s, GPUs %s (all: fleet %v, GPUs %v)", fleet[1], gpus[1], fleet, gpus)
		// The issue asks for under 1 s; the bound here is generous for a loaded CI machine.
		if fleet[1] > 3*time.Second {
			t.Errorf("fleet view's first render with 1,000 clusters took %s (median of 3), want under 1 s (bound 3 s)", fleet[1])
		}
	})
}
