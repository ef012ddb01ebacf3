package chartflags

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/install"
)

// Install installs the embedded chart (charts.Hub or charts.Agent; its Deployment has the same
// name) into the cluster cfg points at with the flags' values over base, refusing a Flotilla of
// another version there unless --upgrade. command names the install mode (`flotilla init`,
// `flotilla join`) in that refusal. ready, when not nil, must also hold once the Deployment is
// ready (within --wait); with --rollback-on-failure a failed install leaves the cluster as it was.
func (f Flags) Install(ctx context.Context, cfg *rest.Config, out io.Writer, chart, command string, base map[string]any, ready func(context.Context) error) error {
	vals, err := f.Values(base)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ch, err := charts.Load(chart)
	if err != nil {
		return err
	}
	if !f.Upgrade {
		err := install.CheckInstalledVersion(ctx, cs, f.Namespace, chart, ch.AppVersion(), strings.TrimPrefix(chart, "flotilla-"),
			fmt.Sprintf("run `%s --install --upgrade` to replace it (docs/install.md, Upgrades)", command))
		if err != nil {
			return err
		}
	}
	_, err = install.InstallChart(ctx, cfg, install.Chart{
		Chart: chart, Loaded: ch, Release: charts.Release{Name: chart, Namespace: f.Namespace}, Values: vals,
		Deployment: chart, Timeout: f.Wait, Ready: ready, RollbackOnFailure: f.RollbackOnFailure,
		Out: out, Clock: clock.RealClock{},
	})
	return err
}
