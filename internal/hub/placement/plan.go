package placement

import (
	"maps"
	"slices"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// Step is one write of a placement's decisions: a PlacementDecision made to hold exactly Slice
// (created if missing), or, when Delete is set, the PlacementDecision named Slice.Name deleted.
type Step struct {
	Delete bool
	Slice  scheduler.PlacementDecisionSlice
}

// Plan orders the writes that take a placement's PlacementDecisions from current to desired so
// that no cluster in both ever disappears from all of them, and no PlacementDecision ever holds
// more than clusterv1beta1.MaxDecisionsPerPlacementDecision clusters.
//
// OCM writes "old plus new" first and the final contents after; the CRD caps a PlacementDecision
// at 100 decisions, so a full slice that gains a cluster cannot hold both. Instead a desired slice
// is written with its final content once every still-selected cluster it drops is held by another
// slice. Slices whose gains come from their neighbors (names inserted in sorted order shift every
// boundary) are thereby written from the last to the first, one write each. When the slices wait on
// each other in a cycle (two full slices swapping clusters), the blocked clusters of one slice are
// first copied to a spare PlacementDecision named after the last desired one, which is deleted at
// the end with every surplus slice. Slices already as desired are not written.
func Plan(current, desired []scheduler.PlacementDecisionSlice) []Step {
	st := newPlanState(current, desired)
	desiredNames := map[string]bool{}
	var pending []scheduler.PlacementDecisionSlice
	for _, s := range desired {
		desiredNames[s.Name] = true
		if old, ok := st.slices[s.Name]; !ok || !Same(old, s) {
			pending = append(pending, s)
		}
	}
	spares := 0
	for len(pending) > 0 {
		next := pending[:0:0]
		for _, s := range pending {
			if len(st.blocked(s)) == 0 {
				st.write(s)
			} else {
				next = append(next, s)
			}
		}
		if len(next) == len(pending) {
			// A cycle: park the first slice's blocked clusters in a spare, then it can be written.
			s := next[0]
			spare := scheduler.PlacementDecisionSlice{Labels: maps.Clone(st.slices[s.Name].Labels), Decisions: st.blocked(s)}
			for spares++; ; spares++ {
				spare.Name = spareName(desired, spares)
				if _, taken := st.slices[spare.Name]; !taken && !desiredNames[spare.Name] {
					break
				}
			}
			st.write(spare)
			st.write(s)
			next = next[1:]
		}
		pending = next
	}
	for _, name := range st.order {
		if !desiredNames[name] {
			st.steps = append(st.steps, Step{Delete: true, Slice: scheduler.PlacementDecisionSlice{Name: name}})
		}
	}
	return st.steps
}

// planState is what the PlacementDecisions hold after the steps planned so far.
type planState struct {
	// keep are the clusters some desired slice holds.
	keep map[string]bool
	// slices are the PlacementDecisions by name; count is in how many of them each cluster is.
	slices map[string]scheduler.PlacementDecisionSlice
	count  map[string]int
	// order is the names in slices, current first, then spares, for a stable delete order.
	order []string
	steps []Step
}

func newPlanState(current, desired []scheduler.PlacementDecisionSlice) *planState {
	st := &planState{keep: map[string]bool{}, slices: map[string]scheduler.PlacementDecisionSlice{}, count: map[string]int{}}
	for _, s := range desired {
		for _, d := range s.Decisions {
			st.keep[d.ClusterName] = true
		}
	}
	for _, s := range current {
		st.put(s)
	}
	return st
}

// put records that the PlacementDecision s.Name holds s.
func (st *planState) put(s scheduler.PlacementDecisionSlice) {
	if old, ok := st.slices[s.Name]; ok {
		for _, d := range old.Decisions {
			st.count[d.ClusterName]--
		}
	} else {
		st.order = append(st.order, s.Name)
	}
	for _, d := range s.Decisions {
		st.count[d.ClusterName]++
	}
	st.slices[s.Name] = s
}

// write plans the write of s.
func (st *planState) write(s scheduler.PlacementDecisionSlice) {
	st.steps = append(st.steps, Step{Slice: s})
	st.put(s)
}

// blocked are the still-selected clusters that writing s would make vanish.
func (st *planState) blocked(s scheduler.PlacementDecisionSlice) []clusterv1beta1.ClusterDecision {
	old, ok := st.slices[s.Name]
	if !ok {
		return nil
	}
	var out []clusterv1beta1.ClusterDecision
	for _, d := range old.Decisions {
		if st.keep[d.ClusterName] && st.count[d.ClusterName] == 1 && !holds(s, d.ClusterName) {
			out = append(out, d)
		}
	}
	return out
}

// spareName names the n-th spare (from 1) after the desired slices: <placement>-decision-<len+n>.
func spareName(desired []scheduler.PlacementDecisionSlice, n int) string {
	placement := ""
	if len(desired) > 0 {
		placement = desired[0].Labels[clusterv1beta1.PlacementLabel]
	}
	return clusterv1beta1.PlacementDecisionName(placement, len(desired)+n)
}

func holds(s scheduler.PlacementDecisionSlice, cluster string) bool {
	return slices.ContainsFunc(s.Decisions, func(d clusterv1beta1.ClusterDecision) bool { return d.ClusterName == cluster })
}

// Same reports whether two slices have the same name, labels and decisions (in order).
func Same(a, b scheduler.PlacementDecisionSlice) bool {
	return a.Name == b.Name && maps.Equal(a.Labels, b.Labels) && slices.Equal(a.Decisions, b.Decisions)
}
