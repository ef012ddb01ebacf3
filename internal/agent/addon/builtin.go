package addon

import (
	"context"
	"time"
)

// builtInStep runs the built-in add-ons that the cluster's ManagedClusterAddOns switch on, and
// stops the others (builtin.Manager).
func (a *Agent) builtInStep(ctx context.Context) (time.Duration, error) {
	v := a.view.Get()
	if a.opts.BuiltIns == nil || v == nil {
		return idle, nil
	}
	mcas, err := a.addOns(ctx, v)
	if err != nil {
		return 0, err
	}
	next, err := a.opts.BuiltIns.Sync(ctx, v.hub, mcas)
	if next <= 0 {
		next = idle
	}
	return next, err
}

// builtIn reports whether name is a built-in add-on this agent runs: its health is the run's,
// not a Lease's.
func (a *Agent) builtIn(name string) bool {
	return a.opts.BuiltIns != nil && a.opts.BuiltIns.Has(name)
}

// builtInWake adds the end of a built-in add-on's run to the signals that wake its loop.
func (a *Agent) builtInWake(changes []func() <-chan struct{}) []func() <-chan struct{} {
	if a.opts.BuiltIns == nil {
		return changes
	}
	return append(append([]func() <-chan struct{}(nil), changes...), a.opts.BuiltIns.Ended)
}
