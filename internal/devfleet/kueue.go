package devfleet

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/flotilla/flotilla/internal/localk8s"
)

// startKueue starts Kueue's manager, detached, on every cluster of the fleet (the hub included),
// in parallel, and records each started process in the state, so that `down` stops them and
// `status` lists them, even when another cluster's manager failed to start.
func startKueue(ctx context.Context, f *localk8s.Fleet, bins localk8s.KueueBinaries, st *State, say func(string, ...any)) error {
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
			started[i], errs[i] = localk8s.StartKueue(ctx, localk8s.KueueOptions{Cluster: c, Binaries: bins, Detach: true})
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
