package workloadfit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
)

const (
	gpu  = usagev1alpha1.ResourceNvidiaGPU
	h100 = "NVIDIA-H100-80GB-HBM3"
)

// podSet is a pod set of count pods asking for requests (name=amount) and selecting model.
func podSet(name string, count int32, model string, requests map[string]string) kueuev1beta2.PodSet {
	rl := corev1.ResourceList{}
	for k, v := range requests {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	ps := kueuev1beta2.PodSet{Name: kueuev1beta2.PodSetReference(name), Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl}}}}}}
	if model != "" {
		ps.Template.Spec.NodeSelector = map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: model}
	}
	return ps
}

func TestGangs(t *testing.T) {
	q := resource.MustParse
	flavors := func(f kueuev1beta2.ResourceFlavorReference) map[string]string {
		if f == "h100" {
			return map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: h100}
		}
		return nil
	}
	limitsOnly := podSet("main", 1, "", nil)
	limitsOnly.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{gpu: q("2")}
	cases := map[string]struct {
		wl   kueuev1beta2.Workload
		want []gpufit.Gang
	}{
		"cpu only": {
			wl: kueuev1beta2.Workload{Spec: kueuev1beta2.WorkloadSpec{PodSets: []kueuev1beta2.PodSet{podSet("main", 4, "", map[string]string{"cpu": "2", "memory": "1Gi"})}}},
		},
		"a launcher and 8-GPU workers on a model": {
			wl: kueuev1beta2.Workload{Spec: kueuev1beta2.WorkloadSpec{PodSets: []kueuev1beta2.PodSet{
				podSet("launcher", 1, "", map[string]string{"cpu": "1"}),
				podSet("workers", 4, h100, map[string]string{"cpu": "8", gpu: "8"}),
			}}},
			want: []gpufit.Gang{{Resource: gpu, Model: h100, PodSets: []gpufit.PodSet{{Name: "workers", Count: 4, Per: q("8")}}}},
		},
		"a GPU limit without a request asks for the limit": {
			wl:   kueuev1beta2.Workload{Spec: kueuev1beta2.WorkloadSpec{PodSets: []kueuev1beta2.PodSet{limitsOnly}}},
			want: []gpufit.Gang{{Resource: gpu, PodSets: []gpufit.PodSet{{Name: "main", Count: 1, Per: q("2")}}}},
		},
		"TPUs and other extended resources, each its own gang": {
			wl: kueuev1beta2.Workload{Spec: kueuev1beta2.WorkloadSpec{PodSets: []kueuev1beta2.PodSet{
				podSet("main", 2, "", map[string]string{usagev1alpha1.ResourceGoogleTPU: "4", "example.com/fpga": "1", "kubernetes.io/batch": "1"}),
			}}},
			want: []gpufit.Gang{
				{Resource: "example.com/fpga", PodSets: []gpufit.PodSet{{Name: "main", Count: 2, Per: q("1")}}},
				{Resource: usagev1alpha1.ResourceGoogleTPU, PodSets: []gpufit.PodSet{{Name: "main", Count: 2, Per: q("4")}}},
			},
		},
		"the model of the flavor the hub assigned, and the admitted count": {
			wl: kueuev1beta2.Workload{
				Spec: kueuev1beta2.WorkloadSpec{PodSets: []kueuev1beta2.PodSet{podSet("workers", 8, "", map[string]string{gpu: "1"})}},
				Status: kueuev1beta2.WorkloadStatus{Admission: &kueuev1beta2.Admission{PodSetAssignments: []kueuev1beta2.PodSetAssignment{{
					Name: "workers", Count: ptr.To[int32](6), Flavors: map[corev1.ResourceName]kueuev1beta2.ResourceFlavorReference{gpu: "h100"},
				}}}},
			},
			want: []gpufit.Gang{{Resource: gpu, Model: h100, PodSets: []gpufit.PodSet{{Name: "workers", Count: 6, Per: q("1")}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Gangs(&tc.wl, flavors)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Gangs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeAndOrder(t *testing.T) {
	q := resource.MustParse
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	// usage is a ResourceUsage whose h100 nodes have the given free GPUs each.
	usage := func(perNode ...int64) *usagev1alpha1.ResourceUsage {
		var dist []usagev1alpha1.NodesWithFree
		var total int64
		for i, n := range perNode { // callers give amounts largest first
			total += n
			if len(dist) > 0 && dist[len(dist)-1].Free.Value() == n {
				dist[len(dist)-1].Nodes++ // one entry per amount, counting the larger ones too
				continue
			}
			dist = append(dist, usagev1alpha1.NodesWithFree{Free: *resource.NewQuantity(n, resource.DecimalSI), Nodes: int32(i + 1)})
		}
		capacity := *resource.NewQuantity(int64(8*len(perNode)), resource.DecimalSI)
		return &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{
			ObservedTime: &metav1.Time{Time: now.Add(-time.Second)}, ValidUntil: &metav1.Time{Time: now.Add(time.Minute)},
			Resources: []usagev1alpha1.ResourceFigures{{Name: gpu, Model: h100, Capacity: capacity, Allocatable: capacity,
				Free: *resource.NewQuantity(total, resource.DecimalSI), FreeNodes: dist}},
		}}
	}
	gangs := []gpufit.Gang{{Resource: gpu, Model: h100, PodSets: []gpufit.PodSet{{Name: "workers", Count: 2, Per: q("8")}}}}
	verdicts := []Verdict{
		Judge("gpu-east", usage(8, 2, 2, 2, 2), gangs, now),
		Judge("no-figures", nil, gangs, now),
		Judge("gpu-west", usage(8, 8), gangs, now),
	}
	want := []Verdict{
		{Cluster: "gpu-east", State: NoFit, Message: "needs 2 pods with 8 " + h100 + " each: only 1 pod fits on its nodes (free per node: 8 on 1 node, 2 on 4 nodes)"},
		{Cluster: "no-figures", State: Unknown, Message: "no ResourceUsage no-figures/resource-usage: enable the resource-usage add-on: `flotilla addon enable resource-usage --clusters no-figures`"},
		{Cluster: "gpu-west", State: Fits, Message: h100 + ": all 2 pods fit (free per node: 8 on 2 nodes)"},
	}
	if diff := cmp.Diff(want, verdicts); diff != "" {
		t.Errorf("Judge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gpu-west", "no-figures"}, Order(verdicts)); diff != "" {
		t.Errorf("Order (-want +got):\n%s", diff)
	}
	// Claims: two workloads judged against the same figures before the worker reports again.
	var claims Claims
	west := usage(8, 8) // observed a second ago
	claims.Offer("gpu-west", "first", gangs, now)
	if got := JudgeAfter("gpu-west", west, &claims, "second", gangs, now); got.State != NoFit {
		t.Errorf("a second workload on the node the first was just offered: %+v, want NoFit", got)
	}
	if got := JudgeAfter("gpu-west", west, &claims, "first", gangs, now); got.State != Fits {
		t.Errorf("the first workload against its own claim: %+v, want Fits", got)
	}
	west.Status.ObservedTime = &metav1.Time{Time: now.Add(DefaultSettle)} // figures that count it
	if got := JudgeAfter("gpu-west", west, &claims, "second", gangs, now); got.State != Fits {
		t.Errorf("figures observed Settle after the offer: %+v, want the claim dropped and Fits", got)
	}
	if got := claims.Of("gpu-west", "", now.Add(-time.Hour)); len(got) != 0 {
		t.Errorf("claims after they were dropped: %v", got)
	}
	if got := Judge("any", nil, nil, now); got.State != Fits {
		t.Errorf("a workload without gangs: %+v, want Fits", got)
	}
}
