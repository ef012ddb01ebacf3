package devfleet

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// stopOrder stops the controllers before the API servers and the API servers before etcd, as a
// real control plane is shut down.
var stopOrder = [][]string{
	{localk8s.KwokBin, localk8s.SchedulerBin, localk8s.ControllerManagerBin},
	{localk8s.APIServerBin},
	{localk8s.EtcdBin},
}

// Down stops every process of the fleet in dir and removes what up made there: the fleet's folder
// and the state file, then dir itself if nothing else is left in it. Other files in dir are
// kept. With no fleet it says so and succeeds: the goal, nothing running, holds.
func Down(dir string, out io.Writer) error {
	st, err := Load(dir)
	if errors.Is(err, ErrNotRunning) {
		_, _ = fmt.Fprintf(out, "no fleet is running (nothing in %s)\n", dir)
		return nil
	}
	if err != nil {
		return err
	}
	rank := map[string]int{}
	for i, group := range stopOrder {
		for _, c := range group {
			rank[c] = i
		}
	}
	var errs []error
	for i := range stopOrder {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, p := range st.Processes {
			r, known := rank[p.Component]
			if !known {
				r = 0 // anything later issues add (agents, the hub) stops with the controllers
			}
			if r != i {
				continue
			}
			wg.Go(func() {
				if err := localk8s.StopPID(p.PID, p.Binary, 5*time.Second); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	// Real nodes last: their kubelets, containerds and containers are found by cgroup, their
	// mounts, cgroups and networks removed (nothing is recorded for a fleet without them).
	if err := tearDownRealNodes(st); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping the fleet in %s: %w; its state is kept so that `flotilla dev down` can try again", dir, err)
	}
	kept, err := removeFiles(dir)
	if err != nil {
		return fmt.Errorf("the fleet stopped, but removing its files from %s failed: %w", dir, err)
	}
	if len(kept) > 0 {
		_, _ = fmt.Fprintf(out, "fleet stopped (%d processes) and its files removed; %s kept, as it holds files the fleet did not make: %s\n",
			len(st.Processes), dir, strings.Join(kept, ", "))
		return nil
	}
	_, _ = fmt.Fprintf(out, "fleet stopped (%d processes) and %s removed\n", len(st.Processes), dir)
	return nil
}
