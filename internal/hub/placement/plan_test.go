package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// slicesOf cuts names (sorted here) into slices of at most 100 as the scheduler does, one group.
func slicesOf(names ...string) []scheduler.PlacementDecisionSlice {
	names = slices.Sorted(slices.Values(names))
	g := []scheduler.DecisionGroup{{Index: 0, Clusters: names}}
	return scheduler.SlicePlacementDecisions("p", g, map[string]scheduler.Decision{})
}

func clusterNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return out
}

// replay applies steps to current and checks after each that every cluster in both current and
// desired is in some slice and that no slice holds more than 100; it returns the final state.
func replay(t *testing.T, current, desired []scheduler.PlacementDecisionSlice, steps []Step) map[string]scheduler.PlacementDecisionSlice {
	t.Helper()
	inDesired := map[string]bool{}
	for _, s := range desired {
		for _, d := range s.Decisions {
			inDesired[d.ClusterName] = true
		}
	}
	var kept []string
	state := map[string]scheduler.PlacementDecisionSlice{}
	for _, s := range current {
		state[s.Name] = s
		for _, d := range s.Decisions {
			if inDesired[d.ClusterName] {
				kept = append(kept, d.ClusterName)
			}
		}
	}
	for i, st := range steps {
		if st.Delete {
			delete(state, st.Slice.Name)
		} else {
			if n := len(st.Slice.Decisions); n > clusterv1beta1.MaxDecisionsPerPlacementDecision {
				t.Fatalf("step %d writes %s with %d decisions, over the CRD's 100", i, st.Slice.Name, n)
			}
			state[st.Slice.Name] = st.Slice
		}
		for _, c := range kept {
			found := false
			for _, s := range state {
				found = found || holds(s, c)
			}
			if !found {
				t.Fatalf("after step %d (%s delete=%t) still-selected cluster %s is in no slice", i, st.Slice.Name, st.Delete, c)
			}
		}
	}
	return state
}

func wantState(desired []scheduler.PlacementDecisionSlice) map[string]scheduler.PlacementDecisionSlice {
	m := map[string]scheduler.PlacementDecisionSlice{}
	for _, s := range desired {
		m[s.Name] = s
	}
	return m
}

func TestPlan(t *testing.T) {
	base := clusterNames("c", 250)
	swapped := func() (cur, want []scheduler.PlacementDecisionSlice) {
		// Two full slices that swap one cluster each: a cycle.
		a, b := slicesOf(clusterNames("a", 100)...)[0], slicesOf(clusterNames("b", 100)...)[0]
		b.Name = clusterv1beta1.PlacementDecisionName("p", 2)
		cur = []scheduler.PlacementDecisionSlice{a, b}
		a2, b2 := a, b
		a2.Decisions = append(slices.Clone(a.Decisions[1:]), b.Decisions[0])
		b2.Decisions = append(slices.Clone(b.Decisions[1:]), a.Decisions[0])
		return cur, []scheduler.PlacementDecisionSlice{a2, b2}
	}
	swapCur, swapWant := swapped()
	cases := map[string]struct {
		current, desired []scheduler.PlacementDecisionSlice
		wantWrites       []string // names written, in order ("-name" for a delete)
	}{
		"unchanged": {current: slicesOf(base...), desired: slicesOf(base...)},
		"first": {current: nil, desired: slicesOf(base[:3]...),
			wantWrites: []string{"p-decision-1"}},
		"names inserted first shift every boundary: written last to first": {
			current: slicesOf(base...), desired: slicesOf(append(slices.Clone(base), "a-new")...),
			wantWrites: []string{"p-decision-3", "p-decision-2", "p-decision-1"}},
		"first names removed: first to last": {
			current: slicesOf(base...), desired: slicesOf(base[5:]...),
			wantWrites: []string{"p-decision-1", "p-decision-2", "p-decision-3"}},
		"shrinks to fewer slices: surplus deleted last": {
			current: slicesOf(base...), desired: slicesOf(base[:150]...),
			wantWrites: []string{"p-decision-2", "-p-decision-3"}},
		"grows by a slice": {
			current: slicesOf(base[:200]...), desired: slicesOf(append(slices.Clone(base), "a-new")...),
			wantWrites: []string{"p-decision-3", "p-decision-2", "p-decision-1"}},
		"a swap between full slices goes through a spare": {
			current: swapCur, desired: swapWant,
			wantWrites: []string{"p-decision-3", "p-decision-1", "p-decision-2", "-p-decision-3"}},
		"all deselected": {current: slicesOf(base[:120]...), desired: slicesOf(),
			wantWrites: []string{"p-decision-1", "-p-decision-2"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			steps := Plan(tc.current, tc.desired)
			var got []string
			for _, s := range steps {
				if s.Delete {
					got = append(got, "-"+s.Slice.Name)
				} else {
					got = append(got, s.Slice.Name)
				}
			}
			if diff := cmp.Diff(tc.wantWrites, got); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantState(tc.desired), replay(t, tc.current, tc.desired, steps)); diff != "" {
				t.Errorf("final state (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanRandom replays plans between random memberships, groups and orders: no still-selected
// cluster ever vanishes, no slice exceeds 100, and the end state is the desired one.
func TestPlanRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	universe := clusterNames("c", 400)
	random := func() []scheduler.PlacementDecisionSlice {
		var groups []scheduler.DecisionGroup
		perm := r.Perm(len(universe))[:r.IntN(len(universe))]
		per := 1 + r.IntN(250)
		for start := 0; start < len(perm); start += per {
			var g []string
			for _, i := range perm[start:min(start+per, len(perm))] {
				g = append(g, universe[i])
			}
			groups = append(groups, scheduler.DecisionGroup{Index: int32(len(groups)), Name: "g" + strconv.Itoa(len(groups)), Clusters: g})
		}
		if len(groups) == 0 {
			groups = []scheduler.DecisionGroup{{Clusters: []string{}}}
		}
		return scheduler.SlicePlacementDecisions("p", groups, map[string]scheduler.Decision{})
	}
	for i := range 300 {
		cur, want := random(), random()
		steps := Plan(cur, want)
		if diff := cmp.Diff(wantState(want), replay(t, cur, want, steps)); diff != "" {
			t.Fatalf("case %d: final state (-want +got):\n%s", i, diff)
		}
	}
}
