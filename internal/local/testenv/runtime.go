package testenv

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/local/procruntime"
)

// RuntimeNode is the name of a cluster's process-runtime node (Options.HubRuntime,
// Options.SpokeRuntime).
const RuntimeNode = "process-runtime"

// RuntimeAddress is the loopback address of cluster i's runtime node with
// Options.RuntimeAddresses: the hub (0) is 127.0.2.1, spoke-N is 127.0.2.(N+1).
func RuntimeAddress(i int) string { return fmt.Sprintf("127.0.2.%d", i+1) }

// startRuntimes starts, in this process, the kubelet of each cluster's process-runtime node
// that opts asks for (procruntime.NodeRunner, as the cluster's administrator), and waits until
// the nodes are Ready. Their pods' files and logs are under <cluster>/runtime in the fleet's
// folder.
func (e *Env) startRuntimes(ctx context.Context, opts Options) error {
	for i, c := range append([]*Cluster{e.Hub}, e.Spokes...) {
		if (c == e.Hub && !opts.HubRuntime) || (c != e.Hub && !opts.SpokeRuntime) {
			continue
		}
		rt := &procruntime.Runtime{
			Root:     filepath.Join(e.Dir, c.Name, "runtime"),
			Commands: opts.Commands,
			Client:   c.Client,
			Server:   c.RESTConfig(),
			Clock:    clock.RealClock{},
			Env:      opts.RuntimeEnv,
		}
		if opts.RuntimeAddresses {
			rt.Address = RuntimeAddress(i)
		}
		stop, err := procruntime.StartNode(ctx, rt, RuntimeNode, clock.RealClock{}, time.Minute)
		if err != nil {
			e.stopRuntimes()
			return err
		}
		c.Runtime = rt
		e.runtimeStops = append(e.runtimeStops, stop)
	}
	return nil
}

// stopRuntimes stops the runtime nodes' processes, before the fleet stops.
func (e *Env) stopRuntimes() {
	for _, stop := range e.runtimeStops {
		stop()
	}
	e.runtimeStops = nil
}
