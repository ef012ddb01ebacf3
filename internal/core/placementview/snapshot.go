package placementview

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// Objects are the fleet's objects a placement is scheduled against.
type Objects struct {
	Clusters []clusterv1.ManagedCluster
	Sets     []clusterv1beta2.ManagedClusterSet
	// Bindings of any namespace; the scheduler counts only the placement's.
	Bindings []clusterv1beta2.ManagedClusterSetBinding
	Scores   []clusterv1alpha1.AddOnPlacementScore
	// ResourceUsages are the clusters' free-capacity figures (the GPU fit filter, the GPU
	// prioritizers and the CEL GPU functions read them).
	ResourceUsages []usagev1alpha1.ResourceUsage
	// Placements are other placements; they give the scheduler nothing by themselves (their
	// PlacementDecisions do), but a fleet file may hold them.
	Placements []clusterv1beta1.Placement
	// Decisions are existing PlacementDecisions of any placement: this placement's are Steady's
	// input, the others' are Balance's.
	Decisions []clusterv1beta1.PlacementDecision
}

// SnapshotFrom builds the snapshot to schedule placement ns/name against objs, with the current
// and other decisions derived by scheduler.DecisionInputs and the current scores by
// scheduler.CurrentClusterDecisions, as the controller derives them.
func SnapshotFrom(objs *Objects, ns, name string) *scheduler.Snapshot {
	current, others := scheduler.DecisionInputs(ns, name, objs.Decisions)
	return &scheduler.Snapshot{
		Clusters:            objs.Clusters,
		Sets:                objs.Sets,
		Bindings:            objs.Bindings,
		Scores:              objs.Scores,
		ResourceUsages:      objs.ResourceUsages,
		CurrentDecisions:    current,
		OtherDecisionCounts: others,
		// As the controller: spec.scoreRateLimit compares the new scores with these.
		CurrentScores: scheduler.CurrentClusterDecisions(ns, name, objs.Decisions),
	}
}
