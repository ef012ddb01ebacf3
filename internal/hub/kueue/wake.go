package kueue

import (
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

// Freed says whether a worker's figures, from before to after, show room that was not there:
// more of an extended resource free in all, or more nodes with some amount of it free. A
// workload that fit no worker may fit now, so the dispatcher looks at the waiting workloads at
// once rather than at their next round: the figures change a second after a job's pods end, and
// the hub's Kueue admits the next workloads at about that moment. Figures that only shrink, or
// change in cpu or memory alone (which the dispatcher does not judge), wake nothing.
func Freed(before, after *usagev1alpha1.ResourceUsage) bool {
	type key struct{ name, model string }
	old := map[key]*usagev1alpha1.ResourceFigures{}
	for i := range before.Status.Resources {
		f := &before.Status.Resources[i]
		old[key{f.Name, f.Model}] = f
	}
	for i := range after.Status.Resources {
		f := &after.Status.Resources[i]
		if !workloadfit.Extended(f.Name) {
			continue
		}
		o := old[key{f.Name, f.Model}]
		if o == nil {
			if f.Free.Sign() > 0 {
				return true
			}
			continue
		}
		if f.Free.Cmp(o.Free) > 0 {
			return true
		}
		for _, e := range f.FreeNodes {
			if e.Nodes > o.NodesWithAtLeast(e.Free) {
				return true
			}
		}
	}
	return false
}
