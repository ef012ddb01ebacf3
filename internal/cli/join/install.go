package join

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/cli/chartflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// installAgent installs the agent chart on the spoke cfg points at, with the cluster's name and
// the bootstrap kubeconfig in its values, and waits until the agent runs.
func installAgent(ctx context.Context, io streams.IO, cfg *rest.Config, f chartflags.Flags, cluster string, bootstrap []byte, hub string) error {
	start := time.Now()
	base := map[string]any{"clusterName": cluster, "bootstrapKubeconfig": string(bootstrap)}
	if err := f.Install(ctx, cfg, io.Out, charts.Agent, "flotilla join", base, nil); err != nil {
		return err
	}
	_, err := fmt.Fprintf(io.Out, `The agent of cluster %s runs in %s (%s) and registers with the hub at %s.
Accept it on the hub: flotilla accept %s --kubeconfig <hub kubeconfig>
`, cluster, f.Namespace, time.Since(start).Round(time.Second), hub, cluster)
	return err
}
