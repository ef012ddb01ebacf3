package resourceusage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

func node(name string, unschedulable bool, alloc map[corev1.ResourceName]string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: unschedulable}}
	n.Status.Allocatable = corev1.ResourceList{}
	for k, v := range alloc {
		n.Status.Allocatable[k] = resource.MustParse(v)
	}
	return n
}

func pod(nodeName string, phase corev1.PodPhase, req map[corev1.ResourceName]string) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: phase}}
	r := corev1.ResourceList{}
	for k, v := range req {
		r[k] = resource.MustParse(v)
	}
	p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: r}}}
	return p
}

const gpu = corev1.ResourceName("nvidia.com/gpu")

func TestScores(t *testing.T) {
	// 8-GPU nodes: a, with 6 GPUs in use by a running pod; b, idle; c, cordoned.
	nodes := []*corev1.Node{
		node("a", false, map[corev1.ResourceName]string{corev1.ResourceCPU: "64", corev1.ResourceMemory: "512Gi", gpu: "8"}),
		node("b", false, map[corev1.ResourceName]string{corev1.ResourceCPU: "64", corev1.ResourceMemory: "512Gi", gpu: "8"}),
		node("c", true, map[corev1.ResourceName]string{corev1.ResourceCPU: "64", corev1.ResourceMemory: "512Gi", gpu: "8"}),
	}
	running := pod("a", corev1.PodRunning, map[corev1.ResourceName]string{corev1.ResourceCPU: "32", gpu: "6"})
	cases := map[string]struct {
		nodes []*corev1.Node
		pods  []*corev1.Pod
		want  map[string]int32
	}{
		"no nodes: nothing free": {
			want: map[string]int32{"cpuNodeAvailable": -100, "cpuClusterAvailable": -100, "memNodeAvailable": -100, "memClusterAvailable": -100,
				"gpuNodeAvailable": -100, "gpuClusterAvailable": -100, "tpuNodeAvailable": -100, "tpuClusterAvailable": -100},
		},
		"a running pod takes its node's share; a cordoned node counts for nothing": {
			nodes: nodes, pods: []*corev1.Pod{running},
			// cpu: best node 64 free (b) -> 200*64/100-100 = 28; cluster 32+64 = 96 -> 92.
			// memory: 512Gi on b -> 0; 1Ti in all -> 100. GPU: 8 on b -> -20; 2+8 = 10 -> 0.
			want: map[string]int32{"cpuNodeAvailable": 28, "cpuClusterAvailable": 92, "memNodeAvailable": 0, "memClusterAvailable": 100,
				"gpuNodeAvailable": -20, "gpuClusterAvailable": 0, "tpuNodeAvailable": -100, "tpuClusterAvailable": -100},
		},
		"finished and unbound pods take nothing": {
			nodes: nodes, pods: []*corev1.Pod{
				pod("b", corev1.PodSucceeded, map[corev1.ResourceName]string{gpu: "8"}),
				pod("b", corev1.PodFailed, map[corev1.ResourceName]string{gpu: "8"}),
				pod("", corev1.PodPending, map[corev1.ResourceName]string{gpu: "8"}),
			},
			want: map[string]int32{"cpuNodeAvailable": 28, "cpuClusterAvailable": 100, "memNodeAvailable": 0, "memClusterAvailable": 100,
				"gpuNodeAvailable": -20, "gpuClusterAvailable": 60, "tpuNodeAvailable": -100, "tpuClusterAvailable": -100},
		},
		"an overcommitted node is nothing free, not less than nothing": {
			nodes: nodes[:1], pods: []*corev1.Pod{pod("a", corev1.PodRunning, map[corev1.ResourceName]string{gpu: "9"})},
			want: map[string]int32{"cpuNodeAvailable": 28, "cpuClusterAvailable": 28, "memNodeAvailable": 0, "memClusterAvailable": 0,
				"gpuNodeAvailable": -100, "gpuClusterAvailable": -100, "tpuNodeAvailable": -100, "tpuClusterAvailable": -100},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]int32{}
			var order []string
			for _, s := range Scores(tc.nodes, tc.pods) {
				got[s.Name] = s.Value
				order = append(order, s.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			wantOrder := []string{clusterv1alpha1.ScoreCPUNodeAvailable, clusterv1alpha1.ScoreCPUClusterAvailable,
				clusterv1alpha1.ScoreMemNodeAvailable, clusterv1alpha1.ScoreMemClusterAvailable,
				clusterv1alpha1.ScoreGPUNodeAvailable, clusterv1alpha1.ScoreGPUClusterAvailable,
				clusterv1alpha1.ScoreTPUNodeAvailable, clusterv1alpha1.ScoreTPUClusterAvailable}
			if diff := cmp.Diff(wantOrder, order); diff != "" {
				t.Errorf("score order (-want +got):\n%s", diff)
			}
		})
	}
}
