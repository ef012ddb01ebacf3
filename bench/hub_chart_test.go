//go:build integration

package bench

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/procruntime"
)

// hubFromChartEnv, when set, makes the placement benchmark run the hub as the hub chart's
// Deployment says (its ServiceAccount and roles, its args, GOMEMLIMIT from its memory limit)
// through the process runtime, instead of `flotilla hub` with the administrator's kubeconfig.
const hubFromChartEnv = "FLOTILLA_BENCH_HUB_FROM_CHART"

// startHub starts the hub for a benchmark and returns its process and log file.
func startHub(b *testing.B, bin string, c *localk8s.Cluster, logFile string) (*localk8s.Process, string) {
	if os.Getenv(hubFromChartEnv) == "" {
		return startHubProcess(b, bin, c.Kubeconfig, logFile), logFile
	}
	ctx := context.Background()
	free := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		return l.Addr().(*net.TCPAddr).Port
	}
	webhook := free()
	vals := map[string]any{
		"replicas": 1,
		"ports":    map[string]any{"webhook": webhook, "metrics": free(), "health": free(), "explain": free()},
		"webhook":  map[string]any{"advertiseAddress": "127.0.0.1:" + strconv.Itoa(webhook)},
	}
	const ns = "open-cluster-management-hub"
	r, err := install.InstallChart(ctx, c.Config, install.Chart{Chart: charts.Hub, Release: charts.Release{Name: charts.Hub, Namespace: ns}, Values: vals})
	if err != nil {
		b.Fatal(err)
	}
	var d *appsv1.Deployment
	for _, o := range r.Objects {
		if o.GetKind() == "Deployment" {
			d = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
				b.Fatal(err)
			}
		}
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		b.Fatal(err)
	}
	rt := &procruntime.Runtime{
		Root: b.TempDir(), Commands: map[string]string{"ghcr.io/flotilla/flotilla": bin},
		Client: cs, Server: c.Config, Clock: clock.RealClock{},
	}
	run, err := rt.Start(ctx, ns, "flotilla-hub-"+strconv.FormatInt(time.Now().UnixNano(), 36), d.Spec.Template.Spec, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { run.Stop(10 * time.Second) })
	return run.Process(), run.LogPath()
}
