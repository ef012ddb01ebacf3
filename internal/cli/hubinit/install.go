package hubinit

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

// installHub installs the hub chart into the cluster cfg points at, after checking that neither
// OCM's hub nor a Flotilla hub of another version runs there.
func installHub(ctx context.Context, io streams.IO, cfg *rest.Config, f chartflags.Flags, replicas int) error {
	base := map[string]any{}
	if replicas != 0 {
		base["replicas"] = replicas
	}
	vals, err := f.Values(base)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := install.CheckNoOCMHub(ctx, cs); err != nil {
		return err
	}
	ch, err := charts.Load(charts.Hub)
	if err != nil {
		return err
	}
	if !f.Upgrade {
		if err := install.CheckInstalledVersion(ctx, cs, f.Namespace, "flotilla-hub", ch.AppVersion(), "hub",
			"run `flotilla init --install --upgrade` to replace it (docs/install.md, Upgrades)"); err != nil {
			return err
		}
	}
	start := time.Now()
	_, err = install.InstallChart(ctx, cfg, install.Chart{
		Chart: charts.Hub, Release: charts.Release{Name: charts.Hub, Namespace: f.Namespace}, Values: vals,
		Deployment: "flotilla-hub", Timeout: f.Wait, Out: io.Out, Clock: clock.RealClock{},
	})
	if err != nil {
		return err
	}
	if f.Wait > 0 {
		if err := install.WaitWebhook(ctx, cfg, f.Wait, io.Out, clock.RealClock{}); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(io.Out, "The hub is installed in %s (%s).\n", f.Namespace, time.Since(start).Round(time.Second))
	return err
}
