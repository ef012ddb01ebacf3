package resourceusage

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

// ResourceGoogleTPU is Google's TPU extended resource.
const ResourceGoogleTPU corev1.ResourceName = "google.com/tpu"

// dimension is one resource scored, with OCM's fixed maximum in the resource's unit.
type dimension struct {
	resource      corev1.ResourceName
	node, cluster string
	max           float64
}

var dimensions = []dimension{
	{corev1.ResourceCPU, clusterv1alpha1.ScoreCPUNodeAvailable, clusterv1alpha1.ScoreCPUClusterAvailable, 100},
	{corev1.ResourceMemory, clusterv1alpha1.ScoreMemNodeAvailable, clusterv1alpha1.ScoreMemClusterAvailable, 1 << 40},
	{corev1.ResourceName(clusterv1.ResourceNvidiaGPU), clusterv1alpha1.ScoreGPUNodeAvailable, clusterv1alpha1.ScoreGPUClusterAvailable, 20},
	{ResourceGoogleTPU, clusterv1alpha1.ScoreTPUNodeAvailable, clusterv1alpha1.ScoreTPUClusterAvailable, 20},
}

// Scores computes the eight scores, in the order of OCM's names, from the spoke's nodes and pods.
func Scores(nodes []*corev1.Node, pods []*corev1.Pod) []clusterv1alpha1.AddOnPlacementScoreItem {
	free := freeByNode(nodes, pods)
	out := make([]clusterv1alpha1.AddOnPlacementScoreItem, 0, 2*len(dimensions))
	for _, d := range dimensions {
		var best, sum float64
		for _, f := range free {
			q := f[d.resource]
			v := q.AsApproximateFloat64()
			if v <= 0 {
				continue
			}
			sum += v
			best = max(best, v)
		}
		out = append(out,
			clusterv1alpha1.AddOnPlacementScoreItem{Name: d.node, Value: normalise(best, d.max)},
			clusterv1alpha1.AddOnPlacementScoreItem{Name: d.cluster, Value: normalise(sum, d.max)})
	}
	return out
}

// normalise maps free in [0, max] to [-100, 100], as OCM's resource usage add-on.
func normalise(free, maxFree float64) int32 {
	switch {
	case free <= 0:
		return clusterv1alpha1.MinScore
	case free >= maxFree:
		return clusterv1alpha1.MaxScore
	}
	return int32(200*free/maxFree - 100)
}

// freeByNode returns each schedulable node's allocatable minus the requests of the unfinished
// pods bound to it.
func freeByNode(nodes []*corev1.Node, pods []*corev1.Pod) map[string]corev1.ResourceList {
	free := make(map[string]corev1.ResourceList, len(nodes))
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			continue
		}
		free[n.Name] = n.Status.Allocatable.DeepCopy()
	}
	for _, p := range pods {
		f, ok := free[p.Spec.NodeName]
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			left, ok := f[name]
			if !ok {
				continue
			}
			left.Sub(q)
			f[name] = left
		}
	}
	return free
}
