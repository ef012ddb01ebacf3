//go:build integration

package install

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/procruntime"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// image is the repository the charts name by default; the runtime runs flotillaBin for it.
const image = "ghcr.io/flotilla/flotilla"

// renderChart renders an embedded chart.
func renderChart(t *testing.T, name, ns string, vals map[string]any) *charts.Rendered {
	t.Helper()
	ch, err := charts.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := charts.Render(ch, charts.Release{Name: name, Namespace: ns}, vals)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// applyChart does what `helm install --create-namespace` does with a rendered chart, as the
// cluster's administrator: the namespace, the CRDs (until Established), then the objects.
func applyChart(t *testing.T, c *testenv.Cluster, ns string, r *charts.Rendered) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var crds []*apiextv1.CustomResourceDefinition
	for _, u := range r.CRDs {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
	}
	if _, err := install.CRDs(ctx, c.RESTConfig(), crds, install.Options{}); err != nil {
		t.Fatalf("installing the chart's CRDs: %v", err)
	}
	if err := install.Objects(ctx, c.RESTConfig(), r.Objects, false, nil); err != nil {
		t.Fatalf("applying the chart: %v", err)
	}
}

func deployment(t *testing.T, r *charts.Rendered, name string) *appsv1.Deployment {
	t.Helper()
	for _, o := range r.Objects {
		if o.GetKind() == "Deployment" && o.GetName() == name {
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("the chart renders no Deployment %s", name)
	return nil
}

// runDeployment runs the first container of a rendered Deployment's pod template as a local
// process, as a kubelet on the cluster would: its ServiceAccount's token, its env, its mounted
// Secrets. The process stops with the test; its log is printed when the test fails.
func runDeployment(t *testing.T, c *testenv.Cluster, d *appsv1.Deployment, pod string) *procruntime.Running {
	t.Helper()
	rt := &procruntime.Runtime{
		Root:     t.TempDir(),
		Commands: map[string]string{image: flotillaBin},
		Client:   c.Client,
		Server:   c.RESTConfig(),
		Clock:    clock.RealClock{},
	}
	run, err := rt.Start(context.Background(), d.Namespace, pod, d.Spec.Template.Spec, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		run.Stop(10 * time.Second)
		if t.Failed() {
			data, _ := os.ReadFile(run.LogPath())
			t.Logf("%s's log (%s, %d bytes):\n%s", pod, run.LogPath(), len(data), localk8s.LogTail(run.LogPath(), 80))
		}
	})
	return run
}

// ready waits until url answers 200, failing early when the process ends.
func ready(t *testing.T, run *procruntime.Running, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-run.Done():
			t.Fatalf("the process exited before %s answered", url)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200 within %s (last error %v)", url, timeout, err)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// hubValues are the values under which the hub chart runs here: ports of its own on loopback,
// and the webhook advertised at its loopback address (the API server is not in a pod network).
func hubValues(t *testing.T) (map[string]any, int) {
	webhook, health := freePort(t), freePort(t)
	return map[string]any{
		"ports":   map[string]any{"webhook": webhook, "metrics": freePort(t), "health": health, "explain": freePort(t)},
		"webhook": map[string]any{"advertiseAddress": "127.0.0.1:" + strconv.Itoa(webhook)},
		// The local fleet's clusters are on loopback.
		"extraArgs": []any{"--dynamic-scoring-allow-local-addresses"},
	}, health
}

// installedFleet is the package's hub and spoke with both charts applied, the hub and the agent
// running as their Deployments with only the charts' ServiceAccounts, and the spoke joined,
// accepted and Available.
type installedFleet struct {
	env              *testenv.Env
	hub, spoke       *testenv.Cluster
	admin            client.Client
	hubRun, agentRun *procruntime.Running
}

// installFleet installs and joins as `flotilla init` and `flotilla join` would, the hub chart
// with hubValues and then set (top-level keys replace hubValues'). Whatever the package's earlier
// tests left (the charts' objects, the accepted cluster) is applied over or taken as it is.
func installFleet(t *testing.T, set map[string]any) *installedFleet {
	t.Helper()
	return installFleetWith(t, set, nil)
}

// installFleetWith is installFleet with the agent chart's values besides its cluster name and
// bootstrap kubeconfig (top-level keys of agentSet replace those).
func installFleetWith(t *testing.T, set, agentSet map[string]any) *installedFleet {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	f := &installedFleet{env: env, hub: env.Hub, spoke: env.Spokes[0], admin: env.HubClient(t)}
	ctx := context.Background()
	// The hub's webhook configuration fails writes once the hub is gone: remove it at the end.
	env.DeleteWebhookConfigurationAtEnd(t)

	vals, health := hubValues(t)
	maps.Copy(vals, set)
	hubChart := renderChart(t, charts.Hub, hubNamespace, vals)
	applyChart(t, f.hub, hubNamespace, hubChart)
	f.hubRun = runDeployment(t, f.hub, deployment(t, hubChart, "flotilla-hub"), "flotilla-hub-0")
	ready(t, f.hubRun, "http://127.0.0.1:"+strconv.Itoa(health)+"/readyz", 90*time.Second)
	if got := f.hubRun.Env(); !slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, "KUBECONFIG=") }) {
		t.Fatalf("the hub process runs without the ServiceAccount's kubeconfig: env %v", got)
	}

	// What `flotilla init` adds beside the chart: the bootstrap identity and its kubeconfig.
	if err := registration.EnsureBootstrapIdentity(ctx, f.hub.Client); err != nil {
		t.Fatal(err)
	}
	bootstrap, err := registration.BootstrapKubeconfig(ctx, f.hub.Client, f.hub.RESTConfig(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	agentVals := map[string]any{"clusterName": clusterName, "bootstrapKubeconfig": string(bootstrap)}
	maps.Copy(agentVals, agentSet)
	agentChart := renderChart(t, charts.Agent, agentNamespace, agentVals)
	applyChart(t, f.spoke, agentNamespace, agentChart)
	f.agentRun = runDeployment(t, f.spoke, deployment(t, agentChart, "flotilla-agent"), "flotilla-agent-0")

	// The administrator accepts the cluster, as `flotilla accept` does.
	testenv.WaitFor(t, 60*time.Second, "the agent's ManagedCluster and certificate request, then acceptance", func(ctx context.Context) (bool, string, error) {
		res, err := registration.Accept(ctx, f.admin, f.hub.Client, clusterName, registration.AcceptOptions{Clock: clock.RealClock{}})
		if err != nil {
			return false, err.Error(), nil
		}
		return len(res.Approved()) > 0 || res.PreviouslyApproved(), fmt.Sprintf("%+v", res), nil
	})
	waitClusterNamed(t, f.admin, clusterName, f.agentRun)
	return f
}

// ensureNamespace makes namespace name on c unless an earlier test of the package did: a chart
// value that binds a role there needs it at install.
func ensureNamespace(t *testing.T, c *testenv.Cluster, name string) {
	t.Helper()
	_, err := c.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
