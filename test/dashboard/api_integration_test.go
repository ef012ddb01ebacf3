//go:build integration

package dashboard

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/certs"
	"github.com/flotilla/flotilla/internal/contract/wellknown"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/dashboard"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

var readAll = []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}

// hubDashboard serves the dashboard as the hub does (viewers' bearer tokens; the hub's identity
// only for discovery) over plain HTTP, and returns its URL.
func hubDashboard(t *testing.T, env *testenv.Env) (string, *dashboard.History) {
	t.Helper()
	admin := env.Hub.RESTConfig()
	hc, err := rest.HTTPClientFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(admin, hc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(admin, client.Options{Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	// The GPU history samples only when the test says (Sample), as the hub's would every minute.
	history := dashboard.NewHistory(c, clock.RealClock{}, time.Minute, dashboard.DefaultHistorySamples)
	srv := httptest.NewServer(dashboard.New(dashboard.Options{Identity: dashboard.BearerTokenFor(admin, nil), Mapper: mapper, Clock: clock.RealClock{}, History: history}))
	t.Cleanup(srv.Close)
	return srv.URL, history
}

func TestAPI(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("TestAPI took %s", time.Since(start).Round(time.Millisecond)) }()
	f := newFixture(t)
	opts := testenv.TestHubOptions()
	opts.DashboardAddress = freeAddress(t)
	f.env.StartHub(t, opts)
	url, history := hubDashboard(t, f.env)
	reader := token(t, f.env, f.ns, "reader", readAll)
	worksViewer := token(t, f.env, f.ns, "works-viewer", []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"},
		Resources: []string{"manifestworks"}, Verbs: []string{"get", "list", "watch"}}}, f.gpuCluster)
	nobody := token(t, f.env, f.ns, "nobody", nil)

	t.Run("a missing or rejected credential gets the login path, not data", func(t *testing.T) {
		for name, tok := range map[string]string{"none": "", "not a token": "not-a-token"} {
			code, body := getJSON(t, url+"/api/clusters", tok, nil)
			if code != http.StatusUnauthorized || !strings.Contains(body, `"login":"/login"`) || strings.Contains(body, f.gpuCluster) {
				t.Errorf("%s: GET /api/clusters = %d %s, want 401 with the login path", name, code, body)
			}
		}
	})

	t.Run("a viewer without rights gets refusals, never the hub's view", func(t *testing.T) {
		for _, path := range []string{"/api/clusters", "/api/gpus", "/api/placements", "/api/works", "/api/addons", "/api/placements/" + f.ns + "/gpu"} {
			code, body := getJSON(t, url+path, nobody, nil)
			if code != http.StatusForbidden || !strings.Contains(body, "permission denied") || strings.Contains(body, f.gpuCluster) {
				t.Errorf("GET %s as a viewer without RBAC = %d %s, want 403 naming the refusal", path, code, body)
			}
		}
	})

	t.Run("a viewer sees the works of the namespaces it may read only", func(t *testing.T) {
		var page dashboard.Page[dashboard.WorkRow]
		if code, body := getJSON(t, url+"/api/works?namespace="+f.gpuCluster, worksViewer, &page); code != http.StatusOK {
			t.Fatalf("works of %s = %d %s", f.gpuCluster, code, body)
		}
		var got []string
		for _, w := range page.Items {
			got = append(got, w.Cluster+"/"+w.Name)
		}
		if diff := cmp.Diff([]string{f.gpuCluster + "/train"}, got); diff != "" {
			t.Errorf("works the viewer sees (-want +got):\n%s", diff)
		}
		for _, path := range []string{"/api/works?namespace=" + f.cpu, "/api/works"} {
			code, body := getJSON(t, url+path, worksViewer, nil)
			if code != http.StatusForbidden || strings.Contains(body, `"serve"`) {
				t.Errorf("GET %s as the works viewer = %d %s, want 403 and no work of %s", path, code, body, f.cpu)
			}
		}
	})

	t.Run("fleet and GPUs", func(t *testing.T) {
		var page dashboard.Page[fleetview.Cluster]
		if code, body := getJSON(t, url+"/api/clusters?limit=500", reader, &page); code != http.StatusOK {
			t.Fatalf("clusters = %d %s", code, body)
		}
		i := slices.IndexFunc(page.Items, func(c fleetview.Cluster) bool { return c.Name == f.gpuCluster })
		if i < 0 {
			t.Fatalf("cluster %s is not in the fleet page", f.gpuCluster)
		}
		c := page.Items[i]
		if c.Available != "True" || c.LeaseRenewedSecondsAgo == nil || *c.LeaseRenewedSecondsAgo > 300 || len(c.Sets) != 1 ||
			c.GPUs["NVIDIA-H100-80GB-HBM3"] != 16 || c.KubernetesVersion != "v1.37.2" {
			t.Errorf("cluster %s = %+v, want available, a recent heartbeat, one set, 16 H100s and v1.37.2", f.gpuCluster, c)
		}
		var gpus dashboard.GPUPage
		if code, body := getJSON(t, url+"/api/gpus?limit=500", reader, &gpus); code != http.StatusOK {
			t.Fatalf("gpus = %d %s", code, body)
		}
		j := slices.IndexFunc(gpus.Items, func(c fleetview.ClusterGPUs) bool { return c.Cluster == f.gpuCluster })
		if j < 0 || len(gpus.Items[j].Models) != 1 || gpus.Items[j].Models[0].Figures == nil {
			t.Fatalf("GPU page = %+v, want %s with H100 figures", gpus, f.gpuCluster)
		}
		fig := gpus.Items[j].Models[0].Figures
		if fig.Free != 8 || fig.Requested != 8 || fig.MostFreeOnANode != 4 || gpus.Items[j].Usage != "current" {
			t.Errorf("H100 figures of %s = %+v (usage %s), want 8 free of 16 and at most 4 on a node, current", f.gpuCluster, fig, gpus.Items[j].Usage)
		}
	})

	t.Run("the GPU map's zoom: one cluster with each node's figures, pages without them", func(t *testing.T) {
		var one dashboard.GPUPage
		if code, body := getJSON(t, url+"/api/gpus?cluster="+f.gpuCluster, reader, &one); code != http.StatusOK {
			t.Fatalf("gpus of %s = %d %s", f.gpuCluster, code, body)
		}
		if len(one.Items) != 1 || len(one.Items[0].Models) != 1 || one.Items[0].Models[0].Figures == nil {
			t.Fatalf("zoom into %s = %+v, want the cluster with its H100 figures", f.gpuCluster, one)
		}
		want := []fleetview.NodeGPUs{{Name: "h-0", Allocatable: 8, Requested: 4, Free: 4}, {Name: "h-1", Allocatable: 8, Requested: 4, Free: 4}}
		if diff := cmp.Diff(want, one.Items[0].Models[0].Figures.Nodes); diff != "" {
			t.Errorf("nodes of %s (-want +got):\n%s", f.gpuCluster, diff)
		}
		var page dashboard.GPUPage
		getJSON(t, url+"/api/gpus?limit=500", reader, &page)
		for _, c := range page.Items {
			for _, m := range c.Models {
				if m.Figures != nil && len(m.Figures.Nodes) > 0 {
					t.Errorf("a page of clusters holds %s's nodes; only the zoom should", c.Cluster)
				}
			}
		}
		for tok, wantCode := range map[string]int{reader: http.StatusNotFound, nobody: http.StatusForbidden} {
			code, body := getJSON(t, url+"/api/gpus?cluster=no-such-cluster", tok, nil)
			if code != wantCode {
				t.Errorf("zoom into a cluster that does not exist = %d %s, want %d", code, body, wantCode)
			}
		}
		if code, body := getJSON(t, url+"/api/gpus?cluster="+f.gpuCluster, nobody, nil); code != http.StatusForbidden || strings.Contains(body, "h-0") {
			t.Errorf("zoom as a viewer without rights = %d %s, want 403 and no node", code, body)
		}
	})

	t.Run("a policy on a cluster: the hub's copy only, read as the viewer", func(t *testing.T) {
		copyName := f.ns + ".audit"
		// A Policy under the copy's name without the hub's labels is nobody's explanation.
		testenv.Create(t, f.c, &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: f.gpuCluster, Name: copyName},
			Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}}})
		base := fmt.Sprintf("%s/api/policies/%s/audit/clusters/", url, f.ns)
		for name, tc := range map[string]struct {
			path, tok string
			code      int
			want      string
		}{
			"not the hub's copy": {path: f.gpuCluster, tok: reader, code: http.StatusNotFound, want: "is not the hub's copy"},
			"not placed there":   {path: f.cpu, tok: reader, code: http.StatusNotFound, want: "has no copy of policy"},
			"no rights":          {path: f.gpuCluster, tok: nobody, code: http.StatusForbidden, want: "permission denied"},
			"a bad name":         {path: "Not_A_Cluster", tok: reader, code: http.StatusNotFound, want: `is not a valid name`},
		} {
			code, body := getJSON(t, base+tc.path, tc.tok, nil)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("%s: GET %s = %d %s, want %d saying %q", name, base+tc.path, code, body, tc.code, tc.want)
			}
		}
	})

	t.Run("a cluster's timeline, read as the viewer", func(t *testing.T) {
		var tl fleetview.Timeline
		if code, body := getJSON(t, url+"/api/clusters/"+f.gpuCluster+"/timeline", reader, &tl); code != http.StatusOK || tl.Cluster != f.gpuCluster ||
			!slices.ContainsFunc(tl.Events, func(e fleetview.TimelineEvent) bool { return e.Stage == fleetview.StageHeartbeat }) {
			t.Errorf("timeline of %s = %d %s, want its heartbeat", f.gpuCluster, code, body)
		}
		for name, tc := range map[string]struct {
			path, tok string
			code      int
			want      string
		}{
			"no rights":  {path: f.gpuCluster, tok: nobody, code: http.StatusForbidden, want: "permission denied"},
			"no cluster": {path: "no-such-cluster", tok: reader, code: http.StatusNotFound, want: "no-such-cluster"},
			"a bad name": {path: "Not_A_Cluster", tok: reader, code: http.StatusNotFound, want: "is not a valid name"},
		} {
			code, body := getJSON(t, url+"/api/clusters/"+tc.path+"/timeline", tc.tok, nil)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("%s: timeline = %d %s, want %d saying %q", name, code, body, tc.code, tc.want)
			}
		}
	})

	t.Run("the GPU history goes only to viewers who may read every figure in it", func(t *testing.T) {
		if err := history.Sample(context.Background()); err != nil {
			t.Fatal(err)
		}
		var h dashboard.GPUHistoryPage
		if code, body := getJSON(t, url+"/api/gpus/history", reader, &h); code != http.StatusOK {
			t.Fatalf("history as the reader = %d %s", code, body)
		}
		i := slices.IndexFunc(h.Models, func(s dashboard.GPUSeries) bool { return s.Model == "NVIDIA-H100-80GB-HBM3" })
		if i < 0 || len(h.Models[i].Points) != 1 || h.Models[i].Points[0].Allocatable < 16 || h.Models[i].Points[0].Free < 8 || h.IntervalSeconds != 60 {
			t.Errorf("history = %+v, want one H100 sample with at least 16 allocatable and 8 free, every 60 s", h)
		}
		for name, tok := range map[string]string{"no rights": nobody, "works of one namespace": worksViewer} {
			code, body := getJSON(t, url+"/api/gpus/history", tok, nil)
			if code != http.StatusForbidden || !strings.Contains(body, "shown only to viewers who may list managedclusters and resourceusages in every namespace") || strings.Contains(body, "NVIDIA") {
				t.Errorf("history as a viewer with %s = %d %s, want 403 saying who may see it", name, code, body)
			}
		}
	})

	// TestBrowser installs Kueue's CRDs on the hub, after this test; the queue view with Kueue is
	// tested there.
	t.Run("without Kueue, the queue view says so", func(t *testing.T) {
		var page dashboard.QueuesPage
		if code, body := getJSON(t, url+"/api/queues", reader, &page); code != http.StatusOK || page.Served || !strings.Contains(page.Message, "the queue view needs Flotilla's FleetQueues and Kueue's") {
			t.Errorf("queues without Kueue = %d %s, want 200 saying the hub serves no ClusterQueues", code, body)
		}
	})

	t.Run("placements, explanation and a what-if that creates nothing", func(t *testing.T) {
		testenv.WaitFor(t, wait, "the placement's decision in the dashboard", func(context.Context) (bool, string, error) {
			var page dashboard.Page[fleetview.Placement]
			code, body := getJSON(t, url+"/api/placements?namespace="+f.ns, reader, &page)
			if code != http.StatusOK {
				return false, body, nil
			}
			return len(page.Items) == 1 && len(page.Items[0].Decisions) == 1 && page.Items[0].Decisions[0].Cluster == f.gpuCluster, body, nil
		})
		var e dashboard.Explanation
		if code, body := getJSON(t, url+"/api/placements/"+f.ns+"/gpu", reader, &e); code != http.StatusOK {
			t.Fatalf("explanation = %d %s", code, body)
		}
		if e.Hub == nil || len(e.Hub.Decisions) != 1 || e.Hub.Decisions[0].Cluster != f.gpuCluster {
			t.Errorf("explanation's hub decisions = %+v, want %s", e.Hub, f.gpuCluster)
		}
		states := map[string]string{}
		for _, c := range e.Explanation.Clusters {
			states[c.Name] = c.FilteredBy
			if c.Selected {
				states[c.Name] = "selected"
			}
		}
		if diff := cmp.Diff(map[string]string{f.gpuCluster: "selected", f.cpu: "Predicate"}, states); diff != "" {
			t.Errorf("explanation (-want +got):\n%s", diff)
		}
		edited := strings.Replace(e.Placement, "numberOfClusters: 1", "numberOfClusters: 2", 1)
		edited = strings.Replace(edited, "gpu: h100", "{}", 1)
		edited = strings.Replace(edited, "matchLabels:\n", "matchLabels: ", 1)
		req, _ := http.NewRequest(http.MethodPost, url+"/api/placements/"+f.ns+"/gpu/simulate", strings.NewReader(edited))
		req.Header.Set("Authorization", "Bearer "+reader)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		var sim dashboard.Explanation
		if res.StatusCode != http.StatusOK {
			b := new(strings.Builder)
			_, _ = bufio.NewReader(res.Body).WriteTo(b)
			t.Fatalf("what-if = %d %s\nplacement:\n%s", res.StatusCode, b, edited)
		}
		if err := jsonDecode(res, &sim); err != nil {
			t.Fatal(err)
		}
		var chosen []string
		for _, d := range sim.Explanation.Decisions {
			chosen = append(chosen, d.ClusterName)
		}
		slices.Sort(chosen)
		want := []string{f.cpu, f.gpuCluster}
		slices.Sort(want)
		if diff := cmp.Diff(want, chosen); diff != "" {
			t.Errorf("what-if of 2 clusters without the gpu predicate chose (-want +got):\n%s\n%s", diff, edited)
		}
		var ps clusterv1beta1.PlacementList
		if err := f.c.List(context.Background(), &ps, client.InNamespace(f.ns)); err != nil || len(ps.Items) != 1 ||
			*ps.Items[0].Spec.NumberOfClusters != 1 {
			t.Errorf("after the what-if the namespace holds %d placements (%v), want the one unchanged", len(ps.Items), err)
		}
	})

	t.Run("paging is stable, by name, with continue tokens", func(t *testing.T) {
		prefix := "pg-" + f.ns
		createClusters(t, f.c, prefix, 7, map[string]string{"dashboard-test": prefix})
		var got []string
		cont := ""
		for pages := 0; ; pages++ {
			if pages > 3 {
				t.Fatalf("more than 3 pages of 3 for 7 clusters: %v", got)
			}
			var page dashboard.Page[fleetview.Cluster]
			path := url + "/api/clusters?limit=3&labelSelector=dashboard-test%3D" + prefix
			if cont != "" {
				path += "&continue=" + cont
			}
			if code, body := getJSON(t, path, reader, &page); code != http.StatusOK {
				t.Fatalf("page %d = %d %s", pages, code, body)
			}
			for _, c := range page.Items {
				got = append(got, c.Name)
			}
			if cont = page.Continue; cont == "" {
				break
			}
		}
		want := []string{prefix + "-00000", prefix + "-00001", prefix + "-00002", prefix + "-00003", prefix + "-00004", prefix + "-00005", prefix + "-00006"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("clusters over the pages (-want +got):\n%s", diff)
		}
		if code, body := getJSON(t, url+"/api/clusters?continue=garbage", reader, nil); code != http.StatusBadRequest || !strings.Contains(body, `parameter \"continue\"`) {
			t.Errorf("a forged continue token = %d %s, want 400 naming continue", code, body)
		}
	})

	t.Run("live updates: a label change is an event", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/events?view=placements", nil)
		req.Header.Set("Authorization", "Bearer "+reader)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		lines := bufio.NewScanner(res.Body)
		if !lines.Scan() || !strings.HasPrefix(lines.Text(), "retry:") {
			t.Fatalf("first line %q, want the retry interval", lines.Text())
		}
		relabel(t, f.c, f.cpu, "tier", "gold")
		for lines.Scan() {
			if lines.Text() == "event: change" {
				return
			}
		}
		t.Errorf("no change event after a label change: %v", lines.Err())
	})

	t.Run("no watch without the right to watch", func(t *testing.T) {
		code, body := getJSON(t, url+"/api/events?view=fleet", nobody, nil)
		if code != http.StatusForbidden {
			t.Errorf("events as a viewer without RBAC = %d %s, want 403", code, body)
		}
	})

	t.Run("the hub serves the dashboard over HTTPS to viewers who log in with their token", func(t *testing.T) {
		hub := "https://" + opts.DashboardAddress
		jar, _ := cookiejar.New(nil)
		// The hub's certificate is self-signed when no --dashboard-cert-dir is given.
		hc := &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test of a self-signed server
		var res *http.Response
		testenv.WaitFor(t, wait, "the hub's dashboard", func(context.Context) (bool, string, error) {
			var err error
			res, err = hc.Get(hub + "/api/clusters")
			if err != nil {
				return false, err.Error(), nil
			}
			_ = res.Body.Close()
			return true, "", nil
		})
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("the hub's dashboard without a token = %d, want 401", res.StatusCode)
		}
		res, err := hc.PostForm(hub+"/login", map[string][]string{"token": {"not-a-token"}})
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if !strings.HasPrefix(res.Request.URL.Path, "/login") || len(jar.Cookies(res.Request.URL)) > 0 {
			t.Errorf("logging in with a bad token went to %s with cookies %v, want back to /login without one", res.Request.URL, jar.Cookies(res.Request.URL))
		}
		res, err = hc.PostForm(hub+"/login", map[string][]string{"token": {reader}})
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		var set *http.Cookie
		for _, c := range res.Request.Response.Cookies() {
			if c.Name == dashboard.SessionCookie {
				set = c
			}
		}
		if set == nil || !set.HttpOnly || !set.Secure || set.SameSite != http.SameSiteStrictMode || set.Path != "/" ||
			set.MaxAge <= 0 || strings.Contains(set.Value, reader) {
			t.Fatalf("login set cookie %+v, want an HttpOnly, Secure, SameSite=Strict %s for / with a Max-Age, not holding the token", set, dashboard.SessionCookie)
		}
		res, err = hc.Get(hub + "/api/whoami")
		if err != nil {
			t.Fatal(err)
		}
		var me dashboard.Whoami
		if err := jsonDecode(res, &me); err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if want := "system:serviceaccount:" + f.ns + ":reader"; me.User != want || !me.TokenLogin {
			t.Errorf("whoami after login = %+v, want %s", me, want)
		}
		res, err = hc.Get(hub + "/api/placements?namespace=" + f.ns)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("placements with the login cookie = %d, want 200", res.StatusCode)
		}
		// Logging out ends the session on the hub: the cookie, sent again, is refused.
		res, err = hc.Post(hub+"/logout", "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		replay, _ := http.NewRequest(http.MethodGet, hub+"/api/whoami", nil)
		replay.AddCookie(&http.Cookie{Name: set.Name, Value: set.Value})
		res, err = (&http.Client{Transport: hc.Transport}).Do(replay)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("whoami with the logged-out session's cookie = %d, want 401", res.StatusCode)
		}
	})

	t.Run("a logout on one replica of the hub is refused by every replica", func(t *testing.T) {
		// Two replicas as the chart runs them: one certificate directory (serving pair and
		// session key), and neither the leader (a Lease held elsewhere), so that only their
		// dashboards run beside the hub this test started.
		ctx := context.Background()
		hubNS := testenv.TestHubOptions().LeaderElectionNamespace
		dir, pool := dashboardCertDir(t)
		holdLease(t, f.env, hubNS)
		cms := f.env.Hub.Client.CoreV1().ConfigMaps(hubNS)
		t.Cleanup(func() { _ = cms.Delete(context.Background(), dashboard.LogoutsConfigMap, metav1.DeleteOptions{}) })
		var replicas []string
		for range 2 {
			o := testenv.TestHubOptions()
			o.LeaderElection, o.DashboardAddress, o.DashboardCertDir = true, freeAddress(t), dir
			f.env.StartHub(t, o)
			replicas = append(replicas, "https://"+o.DashboardAddress)
		}
		a, b := replicas[0], replicas[1]
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		status := func(replica string, cookie *http.Cookie) int {
			req, _ := http.NewRequest(http.MethodGet, replica+"/api/whoami", nil)
			req.AddCookie(cookie)
			res, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				return 0
			}
			_ = res.Body.Close()
			return res.StatusCode
		}
		login := func() *http.Cookie {
			var cookie *http.Cookie
			testenv.WaitFor(t, wait, "logging in on replica A", func(context.Context) (bool, string, error) {
				res, err := (&http.Client{Transport: tr, CheckRedirect: noRedirect}).PostForm(a+"/login", map[string][]string{"token": {reader}})
				if err != nil {
					return false, err.Error(), nil
				}
				_ = res.Body.Close()
				for _, c := range res.Cookies() {
					if c.Name == dashboard.SessionCookie {
						cookie = &http.Cookie{Name: c.Name, Value: c.Value}
					}
				}
				return cookie != nil, res.Status, nil
			})
			return cookie
		}
		logout := func(cookie *http.Cookie) string {
			req, _ := http.NewRequest(http.MethodPost, a+"/logout", nil)
			req.AddCookie(cookie)
			res, err := (&http.Client{Transport: tr, CheckRedirect: noRedirect}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			return res.Header.Get("Location")
		}
		refusedOnB := func(cookie *http.Cookie) {
			testenv.WaitFor(t, 10*time.Second, "replica B refusing the cookie logged out on A", func(context.Context) (bool, string, error) {
				code := status(b, cookie)
				return code == http.StatusUnauthorized, fmt.Sprintf("whoami on B: %d", code), nil
			})
		}

		before := 0 // logouts recorded so far (the test's first hub records them too)
		if cm, err := cms.Get(ctx, dashboard.LogoutsConfigMap, metav1.GetOptions{}); err == nil {
			before = len(cm.Data)
		}
		cookie := login()
		testenv.WaitFor(t, wait, "replica B opening A's session (the shared key)", func(context.Context) (bool, string, error) {
			code := status(b, cookie)
			return code == http.StatusOK, fmt.Sprintf("whoami on B: %d", code), nil
		})
		if to := logout(cookie); to != dashboard.LoginPath {
			t.Errorf("logout went to %q, want %s", to, dashboard.LoginPath)
		}
		if code := status(a, cookie); code != http.StatusUnauthorized {
			t.Errorf("whoami on A with the cookie logged out there = %d, want 401", code)
		}
		refusedOnB(cookie)
		cm, err := cms.Get(ctx, dashboard.LogoutsConfigMap, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels[wellknown.PartOfLabel] != wellknown.PartOf || len(cm.Data) != before+1 {
			t.Errorf("ConfigMap %s: labels %v, %d logouts; want the hub's label and %d", cm.Name, cm.Labels, len(cm.Data), before+1)
		}

		// A ConfigMap of that name the hub did not make is neither written nor read: the logout
		// holds on A only, and the login page says the hub could not record it.
		if err := cms.Delete(ctx, dashboard.LogoutsConfigMap, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: dashboard.LogoutsConfigMap, Namespace: hubNS}, Data: map[string]string{"mine": "yes"}}
		testenv.Create(t, f.c, foreign)
		cookie = login()
		if to := logout(cookie); to != dashboard.LoginPath+"?error=logout" {
			t.Errorf("a logout the hub could not record went to %q, want %s?error=logout", to, dashboard.LoginPath)
		}
		if code := status(a, cookie); code != http.StatusUnauthorized {
			t.Errorf("whoami on A with the cookie logged out there = %d, want 401", code)
		}
		got, err := cms.Get(ctx, dashboard.LogoutsConfigMap, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(foreign.Data, got.Data); diff != "" || len(got.Labels) != 0 {
			t.Errorf("the ConfigMap the hub did not make was changed: labels %v, data (-want +got):\n%s", got.Labels, diff)
		}
	})

	t.Run("flotilla dashboard: the kubeconfig's identity on loopback", func(t *testing.T) {
		local := serve(t, "--kubeconfig", kubeconfigOf(t, f.env, "works-viewer", worksViewer))
		if code, body := getJSON(t, local+"/api/works?namespace="+f.gpuCluster, "", nil); code != http.StatusOK || !strings.Contains(body, `"train"`) {
			t.Errorf("works through flotilla dashboard = %d %s, want the viewer's work", code, body)
		}
		if code, body := getJSON(t, local+"/api/clusters", "", nil); code != http.StatusForbidden {
			t.Errorf("clusters through flotilla dashboard with the works viewer's kubeconfig = %d %s, want 403", code, body)
		}
		req, _ := http.NewRequest(http.MethodGet, local+"/api/works", nil)
		req.Host = "rebound.example"
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("a request for Host rebound.example = %d, want 403", res.StatusCode)
		}
	})
}

// freeAddress is a loopback address with a port free now.
func freeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// dashboardCertDir is a --dashboard-cert-dir as the chart mounts it: a serving pair for
// 127.0.0.1 signed by a CA made for the test (returned as a pool), and a session key.
func dashboardCertDir(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	now := time.Now()
	ca, err := certs.NewCA("dashboard-test-ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := ca.Issue(x509.Certificate{Subject: pkix.Name{CommonName: "dashboard"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"tls.crt": crt, "tls.key": key, dashboard.SessionKeyFile: []byte(strings.Repeat("k", 40))} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	return dir, pool
}

// holdLease makes the hub's leader election Lease in ns held by a replica elsewhere for an hour,
// so that hubs started with leader election never lead, until the test ends.
func holdLease(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	leases := env.Hub.Client.CoordinationV1().Leases(ns)
	now := metav1.NewMicroTime(time.Now())
	_, err := leases.Create(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: hub.LeaderElectionID, Namespace: ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a-replica-elsewhere"), LeaseDurationSeconds: ptr.To(int32(3600)), AcquireTime: &now, RenewTime: &now}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("holding Lease %s/%s: %v", ns, hub.LeaderElectionID, err)
	}
	t.Cleanup(func() { _ = leases.Delete(context.Background(), hub.LeaderElectionID, metav1.DeleteOptions{}) })
}
