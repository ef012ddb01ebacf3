package scheduler

import (
	"slices"
	"strings"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// DecisionInputs derives a Snapshot's two decision inputs for placement ns/name from
// PlacementDecisions of any namespace: current, the clusters in the placement's own decisions
// (Steady's input, and what NoSelectIfNew keeps), and others, for each cluster how many OTHER
// placements selected it (Balance's input). A PlacementDecision belongs to the placement its
// PlacementLabel names in its own namespace; one without that label belongs to none. A cluster
// in several slices of one placement counts once. The controller, the explain endpoint and the
// simulator all build their snapshots with it.
func DecisionInputs(ns, name string, decisions []clusterv1beta1.PlacementDecision) (current []string, others map[string]int) {
	type key struct{ ns, name string }
	selected := map[key]map[string]bool{}
	for i := range decisions {
		d := &decisions[i]
		owner, ok := d.Labels[clusterv1beta1.PlacementLabel]
		if !ok {
			continue
		}
		k := key{d.Namespace, owner}
		if selected[k] == nil {
			selected[k] = map[string]bool{}
		}
		for _, c := range d.Status.Decisions {
			selected[k][c.ClusterName] = true
		}
	}
	others = map[string]int{}
	for k, clusters := range selected {
		mine := k == key{ns, name}
		for c := range clusters {
			if mine {
				current = append(current, c)
			} else {
				others[c]++
			}
		}
	}
	slices.Sort(current)
	return current, others
}

// CurrentClusterDecisions returns the decisions, with their scores and reasons, that the
// PlacementDecisions of placement ns/name hold (a Snapshot's CurrentScores), sorted by cluster
// name; a cluster in several slices counts once. It is never nil, so that an empty result still
// tells the scheduler that the placement has no decisions yet.
func CurrentClusterDecisions(ns, name string, decisions []clusterv1beta1.PlacementDecision) []clusterv1beta1.ClusterDecision {
	out := []clusterv1beta1.ClusterDecision{} // not nil: supplied, even when empty
	seen := map[string]bool{}
	for i := range decisions {
		d := &decisions[i]
		if d.Namespace != ns || d.Labels[clusterv1beta1.PlacementLabel] != name {
			continue
		}
		for _, c := range d.Status.Decisions {
			if !seen[c.ClusterName] {
				seen[c.ClusterName] = true
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b clusterv1beta1.ClusterDecision) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	return out
}
