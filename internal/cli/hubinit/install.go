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

// installHub installs the hub chart into the cluster cfg points at, after checking that OCM's hub
// does not run there, and waits until the API server reaches the hub's webhook.
func installHub(ctx context.Context, io streams.IO, cfg *rest.Config, f chartflags.Flags, replicas int) error {
	base := map[string]any{}
	if replicas != 0 {
		base["replicas"] = replicas
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := install.CheckNoOCMHub(ctx, cs); err != nil {
		return err
	}
	start := time.Now()
	var webhook func(context.Context) error
	if f.Wait > 0 {
		webhook = func(ctx context.Context) error {
			return install.WaitWebhook(ctx, cfg, f.Wait, io.Out, clock.RealClock{})
		}
	}
	if err := f.Install(ctx, cfg, io.Out, charts.Hub, "flotilla init", base, webhook); err != nil {
		return err
	}
	_, err = fmt.Fprintf(io.Out, "The hub is installed in %s (%s).\n", f.Namespace, time.Since(start).Round(time.Second))
	return err
}
