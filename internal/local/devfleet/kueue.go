package devfleet

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// HubWorkerLostTimeout is the hub Kueue's multiKueue.workerLostTimeout in local fleets: a
// workload admitted on a worker the hub can no longer reach is queued again this long after its
// admission (Kueue's default is 15 minutes; docs/kueue.md weighs the choice).
const HubWorkerLostTimeout = 30 * time.Second

// HubRemoteQPS is the rate limit of the hub Kueue's client of each worker in local fleets:
// Kueue's is client-go's 5 requests a second, which paces dispatching at about 1.3 jobs a second
// (bench/README.md).
const HubRemoteQPS = 200

// startKueue starts Kueue's manager, detached, on every cluster of the fleet (the hub included,
// as a MultiKueue manager whose workers the hub's dispatcher nominates, running flotilla's
// credentials plugin for the workers' ClusterProfiles), in parallel, and records each started process in the state, so that `down` stops them and
// `status` lists them, even when another cluster's manager failed to start.
func startKueue(ctx context.Context, f *localk8s.Fleet, bins localk8s.KueueBinaries, flotilla string, st *State, say func(string, ...any)) error {
	abs, err := filepath.Abs(bins.Dir)
	if err != nil {
		return err
	}
	bins.Dir = abs
	clusters := f.Clusters()
	started := make([]*localk8s.Kueue, len(clusters))
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() {
			o := localk8s.KueueOptions{Cluster: c, Binaries: bins, Detach: true}
			if c == f.Hub {
				o.MultiKueue = &localk8s.MultiKueueOptions{DispatcherName: kueue.DispatcherName, WorkerLostTimeout: HubWorkerLostTimeout,
					RemoteQPS: HubRemoteQPS, FairSharing: true}
				if flotilla != "" { // the hub's MultiKueueClusters name ClusterProfiles
					o.MultiKueue.CredentialsPlugin = localk8s.HubPlugin(flotilla, c)
				}
			}
			started[i], errs[i] = localk8s.StartKueue(ctx, o)
		})
	}
	wg.Wait()
	for i, k := range started {
		if k == nil {
			continue
		}
		st.Processes = append(st.Processes, processState(clusters[i].Name, k.Process))
		say("  %-12s Kueue %s ready (pid %d, webhooks on 127.0.0.1:%d)", clusters[i].Name, localk8s.KueueVersion, k.Process.PID(), k.WebhookPort)
	}
	return errors.Join(errs...)
}
