package rollout

import (
	"context"
	"fmt"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// PlacementClusters reads a placement's clusters and their decision groups from its
// PlacementDecisions: what a rollout over that placement goes through.
func PlacementClusters(ctx context.Context, c client.Reader, ns, placement string) ([]Cluster, error) {
	l := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
		return nil, err
	}
	var out []Cluster
	seen := map[string]bool{}
	for _, d := range l.Items {
		idx, err := strconv.ParseInt(d.Labels[clusterv1beta1.DecisionGroupIndexLabel], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("PlacementDecision %s/%s has label %s=%q, not a group index: the placement controller sets it; delete the PlacementDecision to have it rewritten",
				ns, d.Name, clusterv1beta1.DecisionGroupIndexLabel, d.Labels[clusterv1beta1.DecisionGroupIndexLabel])
		}
		g := GroupKey{Name: d.Labels[clusterv1beta1.DecisionGroupNameLabel], Index: int32(idx)}
		for _, cd := range d.Status.Decisions {
			if cd.ClusterName != "" && !seen[cd.ClusterName] {
				seen[cd.ClusterName] = true
				out = append(out, Cluster{Name: cd.ClusterName, Group: g})
			}
		}
	}
	return out, nil
}
