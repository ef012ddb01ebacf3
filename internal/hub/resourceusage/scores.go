package resourceusage

import (
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// dimension is one resource scored, with OCM's names for its two scores.
type dimension struct {
	resource      string
	node, cluster string
}

var dimensions = []dimension{
	{"cpu", clusterv1alpha1.ScoreCPUNodeAvailable, clusterv1alpha1.ScoreCPUClusterAvailable},
	{"memory", clusterv1alpha1.ScoreMemNodeAvailable, clusterv1alpha1.ScoreMemClusterAvailable},
	{usagev1alpha1.ResourceNvidiaGPU, clusterv1alpha1.ScoreGPUNodeAvailable, clusterv1alpha1.ScoreGPUClusterAvailable},
	{usagev1alpha1.ResourceGoogleTPU, clusterv1alpha1.ScoreTPUNodeAvailable, clusterv1alpha1.ScoreTPUClusterAvailable},
}

// Maxima are the fleet's largest allocatable amounts per scored resource: of a cluster, and of
// a node.
type Maxima struct {
	Cluster, Node [4]float64
}

// max is the larger of m and o in every figure.
func (m Maxima) max(o Maxima) Maxima {
	for d := range m.Cluster {
		m.Cluster[d] = max(m.Cluster[d], o.Cluster[d])
		m.Node[d] = max(m.Node[d], o.Node[d])
	}
	return m
}

// FleetMaxima computes the maxima over the ResourceUsages of the fleet.
func FleetMaxima(usages []usagev1alpha1.ResourceUsage) Maxima {
	var m Maxima
	for i := range usages {
		for d, dim := range dimensions {
			f := usages[i].Status.Figures(dim.resource, "")
			if f == nil {
				continue
			}
			m.Cluster[d] = max(m.Cluster[d], f.Allocatable.AsApproximateFloat64())
			m.Node[d] = max(m.Node[d], f.LargestNodeAllocatable.AsApproximateFloat64())
		}
	}
	return m
}

// Scores computes OCM's eight scores, in the order of OCM's names, of one cluster's figures.
func Scores(s *usagev1alpha1.ResourceUsageStatus, m Maxima) []clusterv1alpha1.AddOnPlacementScoreItem {
	out := make([]clusterv1alpha1.AddOnPlacementScoreItem, 0, 2*len(dimensions))
	for d, dim := range dimensions {
		var node, cluster resource.Quantity
		if f := s.Figures(dim.resource, ""); f != nil {
			node, cluster = f.MostFreeOnANode(), f.Free
		}
		out = append(out,
			clusterv1alpha1.AddOnPlacementScoreItem{Name: dim.node, Value: normalise(node.AsApproximateFloat64(), m.Node[d])},
			clusterv1alpha1.AddOnPlacementScoreItem{Name: dim.cluster, Value: normalise(cluster.AsApproximateFloat64(), m.Cluster[d])})
	}
	return out
}

// normalise maps free in [0, maxFree] to [-100, 100].
func normalise(free, maxFree float64) int32 {
	switch {
	case free <= 0 || maxFree <= 0:
		return clusterv1alpha1.MinScore
	case free >= maxFree:
		return clusterv1alpha1.MaxScore
	}
	return int32(200*free/maxFree - 100)
}
