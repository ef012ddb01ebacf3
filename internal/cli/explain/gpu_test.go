package explain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// usage is a ResourceUsage of cluster with free H100 GPUs, valid for five minutes; dist gives
// pairs {amount, nodes with at least that amount}, largest amount first.
func usage(cluster string, free int64, dist ...[2]int64) *usagev1alpha1.ResourceUsage {
	observed, until := metav1.NewTime(now.Add(-time.Minute)), metav1.NewTime(now.Add(5*time.Minute))
	var nodes []usagev1alpha1.NodesWithFree
	for _, d := range dist {
		nodes = append(nodes, usagev1alpha1.NodesWithFree{Free: *resource.NewQuantity(d[0], resource.DecimalSI), Nodes: int32(d[1])})
	}
	capacity := resource.MustParse("16")
	f := usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Capacity: capacity, Allocatable: capacity,
		Free: *resource.NewQuantity(free, resource.DecimalSI), FreeNodes: nodes}
	m := f
	m.Model = "NVIDIA-H100-80GB-HBM3"
	return &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName},
		Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: &observed, ValidUntil: &until, Resources: []usagev1alpha1.ResourceFigures{f, m}}}
}

// TestExplainGPU: explain reads the ResourceUsages and shows the GPU figures of every cluster:
// the one whose total is enough but whose nodes are not (gang fit), the one without figures,
// and the bin-packing scores.
func TestExplainGPU(t *testing.T) {
	objs := hub()
	p := objs[0].(*clusterv1beta1.Placement)
	p.Annotations = map[string]string{"placement.flotilla.io/gpu": "model=NVIDIA-H100-80GB-HBM3,perNode=4,nodes=2"}
	p.Spec.Predicates = nil
	p.Spec.PrioritizerPolicy = clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
		Configurations: []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
			Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: "GPUBinPack"}}}}
	// east: nodes with 6 and 5 free, so 1 spare on the smaller; west: 4 and 4, an exact fit;
	// cpu: 7 and 1, 8 in total, enough for 2 x 4 but not on two nodes.
	objs = append(objs, usage("east", 11, [2]int64{6, 1}, [2]int64{5, 2}), usage("west", 8, [2]int64{4, 2}),
		usage("cpu", 8, [2]int64{7, 1}, [2]int64{1, 2}))
	got, err := runExplain(objs, "ml/gpu")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	want := lines(
		"Placement ml/gpu: 1 of 3 clusters selected",
		"CONDITION                STATUS   REASON                  MESSAGE",
		"PlacementSatisfied       True     AllDecisionsScheduled   All cluster decisions scheduled",
		"PlacementMisconfigured   False    Succeedconfigured       Placement configurations check pass",
		"",
		"RANK   CLUSTER   RESULT       GROUP   TOTAL   SCORES (WEIGHT*SCORE)                                                                                            WHY",
		"1      west      selected     0       100     GPUBinPack 1*100 (smallest node with at least 4 free NVIDIA-H100-80GB-HBM3 has 4 (0 spare); 8 free in total)     NVIDIA-H100-80GB-HBM3: 2 nodes with at least 4 free (needs 2), 8 free in total, most on one node 4",
		"2      east      not chosen   -       -100    GPUBinPack 1*-100 (smallest node with at least 4 free NVIDIA-H100-80GB-HBM3 has 5 (1 spare); 11 free in total)   NVIDIA-H100-80GB-HBM3: 2 nodes with at least 4 free (needs 2), 11 free in total, most on one node 6; not chosen: rank 2, spec.numberOfClusters is 1",
		"-      cpu       filtered     -       -       -                                                                                                                GPUFit: needs 2 nodes with at least 4 free NVIDIA-H100-80GB-HBM3: 8 free in total, but only 1 node has at least 4 free (most on one node: 7)",
		"",
		"The hub's PlacementDecisions select edge; scheduling now selects west: the placement controller has not caught up yet.",
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}
