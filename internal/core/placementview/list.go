package placementview

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// ListFleet lists what the scheduler reads for a placement in namespace ns, as the placement
// controller does: every cluster, set, score, ResourceUsage and PlacementDecision (other placements' decisions
// are Balance's input), and the bindings of ns. Both `flotilla explain` and the hub's
// explanation server call it. The objects are only read: a cache-backed reader hands out its own
// (no deep copies of the whole fleet); a direct client ignores that option.
func ListFleet(ctx context.Context, c client.Reader, ns string) (*Objects, error) {
	var (
		clusters  clusterv1.ManagedClusterList
		sets      clusterv1beta2.ManagedClusterSetList
		bindings  clusterv1beta2.ManagedClusterSetBindingList
		scores    clusterv1alpha1.AddOnPlacementScoreList
		usages    usagev1alpha1.ResourceUsageList
		decisions clusterv1beta1.PlacementDecisionList
	)
	noCopy := client.UnsafeDisableDeepCopy
	lists := []struct {
		what string
		list client.ObjectList
		opts []client.ListOption
	}{
		{"managedclusters", &clusters, []client.ListOption{noCopy}},
		{"managedclustersets", &sets, []client.ListOption{noCopy}},
		{"managedclustersetbindings in namespace " + ns, &bindings, []client.ListOption{noCopy, client.InNamespace(ns)}},
		{"addonplacementscores", &scores, []client.ListOption{noCopy}},
		{"resourceusages", &usages, []client.ListOption{noCopy}},
		{"placementdecisions", &decisions, []client.ListOption{noCopy}},
	}
	for _, l := range lists {
		if err := c.List(ctx, l.list, l.opts...); err != nil {
			return nil, fmt.Errorf("listing %s: %w", l.what, err)
		}
	}
	return &Objects{Clusters: clusters.Items, Sets: sets.Items, Bindings: bindings.Items,
		Scores: scores.Items, ResourceUsages: usages.Items, Decisions: decisions.Items}, nil
}
