package join

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/cli/chartflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/install"
)

// installAgent installs the agent chart on the spoke cfg points at, with the cluster's name and
// the bootstrap kubeconfig in its values, and waits until the agent runs.
func installAgent(ctx context.Context, io streams.IO, cfg *rest.Config, cs kubernetes.Interface, f chartflags.Flags, cluster string, bootstrap []byte, hub string) error {
	vals, err := f.Values(map[string]any{"clusterName": cluster, "bootstrapKubeconfig": string(bootstrap)})
	if err != nil {
		return err
	}
	ch, err := charts.Load(charts.Agent)
	if err != nil {
		return err
	}
	if !f.Upgrade {
		if err := install.CheckInstalledVersion(ctx, cs, f.Namespace, "flotilla-agent", ch.AppVersion(), "agent",
			"run `flotilla join --install --upgrade` to replace it (docs/install.md, Upgrades)"); err != nil {
			return err
		}
	}
	start := time.Now()
	_, err = install.InstallChart(ctx, cfg, install.Chart{
		Chart: charts.Agent, Release: charts.Release{Name: charts.Agent, Namespace: f.Namespace}, Values: vals,
		Deployment: "flotilla-agent", Timeout: f.Wait, Out: io.Out, Clock: clock.RealClock{},
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(io.Out, `The agent of cluster %s runs in %s (%s) and registers with the hub at %s.
Accept it on the hub: flotilla accept %s --kubeconfig <hub kubeconfig>
`, cluster, f.Namespace, time.Since(start).Round(time.Second), hub, cluster)
	return err
}
