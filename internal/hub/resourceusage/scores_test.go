package resourceusage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// gpuUsage is a cluster whose nodes have gpusPerNode GPUs each, with free GPUs spread as given
// (free amount -> nodes with exactly that much).
func gpuUsage(name string, nodes, gpusPerNode int64, free map[int64]int32) usagev1alpha1.ResourceUsage {
	f := usagev1alpha1.ResourceFigures{
		Name:                   usagev1alpha1.ResourceNvidiaGPU,
		Capacity:               *resource.NewQuantity(nodes*gpusPerNode, resource.DecimalSI),
		Allocatable:            *resource.NewQuantity(nodes*gpusPerNode, resource.DecimalSI),
		LargestNodeAllocatable: *resource.NewQuantity(gpusPerNode, resource.DecimalSI),
	}
	var total int64
	var atLeast int32
	for a := gpusPerNode; a > 0; a-- {
		if n := free[a]; n > 0 {
			atLeast += n
			total += a * int64(n)
			f.FreeNodes = append(f.FreeNodes, usagev1alpha1.NodesWithFree{Free: *resource.NewQuantity(a, resource.DecimalSI), Nodes: atLeast})
		}
	}
	f.Free = *resource.NewQuantity(total, resource.DecimalSI)
	return usagev1alpha1.ResourceUsage{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: usagev1alpha1.ResourceUsageName},
		Status:     usagev1alpha1.ResourceUsageStatus{Nodes: int32(nodes), Resources: []usagev1alpha1.ResourceFigures{f}},
	}
}

func TestScoresCompareAcrossTheFleet(t *testing.T) {
	fleet := []usagev1alpha1.ResourceUsage{
		gpuUsage("big", 8, 8, map[int64]int32{8: 4}),   // 64 GPUs, 32 free: 4 whole nodes
		gpuUsage("small", 2, 4, map[int64]int32{4: 2}), // 8 GPUs, all free
		gpuUsage("full", 4, 8, nil),                    // 32 GPUs, none free
	}
	m := FleetMaxima(fleet)
	if diff := cmp.Diff([2]float64{64, 8}, [2]float64{m.Cluster[2], m.Node[2]}); diff != "" {
		t.Errorf("GPU maxima (cluster, node) (-want +got):\n%s", diff)
	}
	tests := []struct {
		cluster               int
		wantNode, wantCluster int32
	}{
		// 32 of the fleet's largest cluster's 64: 0; a whole node of the largest node's 8: 100.
		{0, 100, 0},
		// 8 of 64: -75; its best node has 4 of 8: 0. OCM's fixed maximum of 20 would give -20
		// and the big cluster 100, however much bigger it is.
		{1, 0, -75},
		{2, -100, -100},
	}
	for _, tt := range tests {
		name := fleet[tt.cluster].Namespace
		t.Run(name, func(t *testing.T) {
			got := map[string]int32{}
			for _, s := range Scores(&fleet[tt.cluster].Status, m) {
				got[s.Name] = s.Value
			}
			want := map[string]int32{
				"gpuNodeAvailable": tt.wantNode, "gpuClusterAvailable": tt.wantCluster,
				// the fleet has no CPU, memory or TPU figures: nothing free
				"cpuNodeAvailable": -100, "cpuClusterAvailable": -100, "memNodeAvailable": -100, "memClusterAvailable": -100,
				"tpuNodeAvailable": -100, "tpuClusterAvailable": -100,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalise(t *testing.T) {
	tests := map[string]struct {
		free, max float64
		want      int32
	}{
		"nothing free":      {0, 10, -100},
		"no fleet maximum":  {5, 0, -100},
		"half":              {5, 10, 0},
		"all":               {10, 10, 100},
		"more than the max": {12, 10, 100},
		"a quarter":         {2.5, 10, -50},
	}
	for name, tt := range tests {
		if got := normalise(tt.free, tt.max); got != tt.want {
			t.Errorf("%s: normalise(%v, %v) = %d, want %d", name, tt.free, tt.max, got, tt.want)
		}
	}
}
