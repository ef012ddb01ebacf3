package dashboard

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// request sends method path to a dashboard with o and returns the status, the body and its
// Content-Type.
func request(t *testing.T, o Options, method, path, body string, header map[string]string) (int, string, string) {
	t.Helper()
	if o.Identity == nil {
		o.Identity = BearerToken{Host: "https://127.0.0.1:1"}
	}
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Host = "127.0.0.1:8090"
	for k, v := range header {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	New(o).ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b), w.Header().Get("Content-Type")
}

func TestAPIErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		method, path, body string
		header             map[string]string
		o                  Options
		code               int
		want               string
		login              bool
	}{
		"unknown route":        {method: "GET", path: "/api/nodes", code: 404, want: "no API route GET /api/nodes"},
		"unknown nested":       {method: "GET", path: "/api/placements/ns", code: 404, want: "no API route GET /api/placements/ns"},
		"oversized page":       {method: "GET", path: "/api/clusters?limit=5000", code: 400, want: `parameter "limit": 5000 is more than the 500 a page may hold`},
		"malformed limit":      {method: "GET", path: "/api/works?limit=x", code: 400, want: `parameter "limit": "x" is not a whole number`},
		"unknown parameter":    {method: "GET", path: "/api/gpus?sort=name", code: 400, want: `unknown parameter "sort"`},
		"bad selector":         {method: "GET", path: "/api/clusters?labelSelector=%3D%3D", code: 400, want: `parameter "labelSelector"`},
		"events without view":  {method: "GET", path: "/api/events", code: 400, want: `parameter "view": is required`},
		"bad placement name":   {method: "GET", path: "/api/placements/ml/Not_Valid", code: 404, want: `placement "Not_Valid" is not a valid name`},
		"no credential":        {method: "GET", path: "/api/clusters", code: 401, want: "no credential: log in", login: true},
		"no credential, works": {method: "GET", path: "/api/works?namespace=ml", code: 401, want: "no credential", login: true},
		"what-if not YAML":     {method: "POST", path: "/api/placements/ml/p/simulate", body: "kind: [", code: 400, want: "the what-if's Placement: the body is neither JSON nor YAML"},
		"what-if wrong kind":   {method: "POST", path: "/api/placements/ml/p/simulate", body: "apiVersion: v1\nkind: Pod\n", code: 400, want: `want apiVersion "cluster.open-cluster-management.io/v1beta1", kind "Placement"`},
		"what-if too large":    {method: "POST", path: "/api/placements/ml/p/simulate", body: strings.Repeat("#", maxSimulateBody+1), code: 413, want: "larger than 1 MiB"},
		"what-if other ns":     {method: "POST", path: "/api/placements/ml/p/simulate", body: "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p, namespace: other}\n", code: 400, want: `metadata.namespace "other" differs`},
	} {
		t.Run(name, func(t *testing.T) {
			code, body, ct := request(t, tc.o, tc.method, tc.path, tc.body, tc.header)
			if code != tc.code || ct != "application/json" {
				t.Fatalf("%s %s = %d %s %s, want %d JSON", tc.method, tc.path, code, ct, body, tc.code)
			}
			var e apiError
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("%s %s: body %q is not an error: %v", tc.method, tc.path, body, err)
			}
			if !strings.Contains(e.Message, tc.want) {
				t.Errorf("%s %s: error %q, want it to contain %q", tc.method, tc.path, e.Message, tc.want)
			}
			if got := e.Login == LoginPath; got != tc.login {
				t.Errorf("%s %s: login = %q, want it set: %v", tc.method, tc.path, e.Login, tc.login)
			}
		})
	}
}

func TestHostAndOrigin(t *testing.T) {
	local := Options{Identity: Kubeconfig{REST: &rest.Config{Host: "https://127.0.0.1:1"}}, AllowedHost: Loopback}
	for name, tc := range map[string]struct {
		method string
		header map[string]string
		code   int
	}{
		"loopback":              {method: "GET", header: map[string]string{"Host": "127.0.0.1:8090"}, code: 400},
		"localhost":             {method: "GET", header: map[string]string{"Host": "localhost:8090"}, code: 400},
		"ipv6 loopback":         {method: "GET", header: map[string]string{"Host": "[::1]:8090"}, code: 400},
		"rebound name":          {method: "GET", header: map[string]string{"Host": "evil.example:8090"}, code: 403},
		"LAN address":           {method: "GET", header: map[string]string{"Host": "192.168.1.5:8090"}, code: 403},
		"post from other site":  {method: "POST", header: map[string]string{"Origin": "https://evil.example"}, code: 403},
		"post from same origin": {method: "POST", header: map[string]string{"Origin": "http://127.0.0.1:8090"}, code: 400},
	} {
		t.Run(name, func(t *testing.T) {
			path := "/api/clusters?limit=0"
			if tc.method == "POST" {
				path = "/api/placements/ml/p/simulate"
			}
			code, body, _ := request(t, local, tc.method, path, "", tc.header)
			if code != tc.code {
				t.Errorf("%s with %v = %d %s, want %d", tc.method, tc.header, code, body, tc.code)
			}
		})
	}
}

func TestPages(t *testing.T) {
	assets := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>app</title>")}, "assets/app.js": {Data: []byte("js")}}
	for name, tc := range map[string]struct {
		o    Options
		path string
		code int
		want string
	}{
		"root":            {o: Options{Assets: assets}, path: "/", code: 200, want: "<title>app</title>"},
		"view":            {o: Options{Assets: assets}, path: "/gpus", code: 200, want: "<title>app</title>"},
		"placement":       {o: Options{Assets: assets}, path: "/placements/ml/train", code: 200, want: "<title>app</title>"},
		"asset":           {o: Options{Assets: assets}, path: "/assets/app.js", code: 200, want: "js"},
		"missing asset":   {o: Options{Assets: assets}, path: "/assets/old.js", code: 404, want: "no asset /assets/old.js"},
		"unknown page":    {o: Options{Assets: assets}, path: "/nodes", code: 404, want: "the dashboard has no page /nodes"},
		"without assets":  {o: Options{Assets: fstest.MapFS{".keep": {}}}, path: "/fleet", code: 200, want: "built without the dashboard's web assets"},
		"login, token":    {o: Options{Identity: BearerToken{}}, path: "/login", code: 200, want: `<input id="token" name="token" type="password"`},
		"login, kubeconf": {o: Options{Identity: Kubeconfig{REST: &rest.Config{}}}, path: "/login", code: 200, want: "did not accept the credentials of the kubeconfig"},
	} {
		t.Run(name, func(t *testing.T) {
			code, body, _ := request(t, tc.o, "GET", tc.path, "", nil)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tc.path, code, body, tc.code, tc.want)
			}
		})
	}
}

func TestBearerTokenConfig(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer viewer-token")
	cfg, err := BearerToken{Host: "https://hub:6443", CAData: []byte("ca")}.Config(r)
	if err != nil {
		t.Fatal(err)
	}
	got := struct{ Host, Token, CA, CertFile, Key string }{cfg.Host, cfg.BearerToken, string(cfg.CAData), cfg.CertFile, string(cfg.KeyData)}
	want := struct{ Host, Token, CA, CertFile, Key string }{Host: "https://hub:6443", Token: "viewer-token", CA: "ca"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the viewer's config carries only the hub's address, its CA and the viewer's token (-want +got):\n%s", diff)
	}
}

func TestListName(t *testing.T) {
	wl := &unstructured.UnstructuredList{}
	wl.SetGroupVersionKind(kueueWorkload.WithVersion("v1beta2").GroupVersion().WithKind("WorkloadList"))
	got := []string{}
	for _, l := range []client.ObjectList{&clusterv1.ManagedClusterList{}, &workv1.ManifestWorkList{}, wl} {
		got = append(got, listName(l))
	}
	if diff := cmp.Diff([]string{"managedclusters", "manifestworks", "workloads"}, got); diff != "" {
		t.Errorf("listName (-want +got):\n%s", diff)
	}
}
