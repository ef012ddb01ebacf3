package fleetview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
)

func TestTeamFairShares(t *testing.T) {
	capacity := map[string]int64{"h100": 16, "a100": 8}
	cases := []struct {
		name       string
		guaranteed []map[string]int64
		demand     []map[string]int64
		weights    []float64
		want       []map[string]float64
	}{
		{"both want more than half: halves",
			[]map[string]int64{{}, {}}, []map[string]int64{{"h100": 16}, {"h100": 16}}, []float64{1, 1},
			[]map[string]float64{{"h100": 8}, {"h100": 8}}},
		{"weights divide what both want",
			[]map[string]int64{{}, {}}, []map[string]int64{{"h100": 16}, {"h100": 16}}, []float64{3, 1},
			[]map[string]float64{{"h100": 12}, {"h100": 4}}},
		{"a team asking little leaves the rest to the other",
			[]map[string]int64{{}, {}}, []map[string]int64{{"h100": 16}, {"h100": 2}}, []float64{1, 1},
			[]map[string]float64{{"h100": 14}, {"h100": 2}}},
		{"a guarantee comes first, the rest is shared",
			[]map[string]int64{{}, {"h100": 12}}, []map[string]int64{{"h100": 16}, {"h100": 16}}, []float64{1, 1},
			[]map[string]float64{{"h100": 2}, {"h100": 14}}},
		{"a guarantee counts only up to the demand",
			[]map[string]int64{{}, {"h100": 12}}, []map[string]int64{{"h100": 16}, {"h100": 1}}, []float64{1, 1},
			[]map[string]float64{{"h100": 15}, {"h100": 1}}},
		{"any model shares what the models leave",
			[]map[string]int64{{}, {}}, []map[string]int64{{"h100": 16, AnyModel: 8}, {AnyModel: 2}}, []float64{1, 1},
			[]map[string]float64{{"h100": 16, AnyModel: 6}, {AnyModel: 2}}},
		{"a model the fleet lacks gets nothing",
			[]map[string]int64{{"t4": 4}, {}}, []map[string]int64{{"t4": 4}, {}}, []float64{1, 1},
			[]map[string]float64{{}, {}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := TeamFairShares(capacity, c.guaranteed, c.demand, c.weights)
			if diff := cmp.Diff(c.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("TeamFairShares (-want +got):\n%s", diff)
			}
		})
	}
}

func TestViewQueue(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: "fleet"},
		Spec: queuev1alpha1.FleetQueueSpec{AdmissionCheck: "mk", Reclaim: "Never", Teams: []queuev1alpha1.Team{
			{Name: "a", Namespace: "ns-a", Weight: resource.MustParse("1")},
			{Name: "b", Namespace: "ns-b", Weight: resource.MustParse("1"), Guaranteed: []queuev1alpha1.GuaranteedGPUs{{Model: "H100", GPUs: 4}}},
			{Name: "c", Namespace: "ns-c", Weight: resource.MustParse("2")},
		}},
		Status: queuev1alpha1.FleetQueueStatus{Models: []queuev1alpha1.ModelQuota{{Model: "H100", Flavor: "fleet-h100", GPUs: 16}, {Model: "A100", Flavor: "fleet-a100", GPUs: 8}},
			Conditions: []metav1.Condition{{Type: queuev1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: queuev1alpha1.ReasonApplied}}},
	}
	gpus := func(model string, n int64) kueuev1beta2.FlavorUsage {
		return kueuev1beta2.FlavorUsage{Name: kueuev1beta2.ResourceFlavorReference(fleetqueue.FlavorName("fleet", model)),
			Resources: []kueuev1beta2.ResourceUsage{{Name: corev1.ResourceCPU, Total: resource.MustParse("64")}, {Name: usagev1alpha1.ResourceNvidiaGPU, Total: *resource.NewQuantity(n, resource.DecimalSI)}}}
	}
	ours := map[string]string{fleetqueue.FleetQueueLabel: "fleet"}
	cqs := []kueuev1beta2.ClusterQueue{
		{ObjectMeta: metav1.ObjectMeta{Name: "fleet-a", Labels: ours}, Status: kueuev1beta2.ClusterQueueStatus{FlavorsReservation: []kueuev1beta2.FlavorUsage{gpus("h100", 12)}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "fleet-b", Labels: ours}},
		// Not written for this FleetQueue: its figures are not the team's.
		{ObjectMeta: metav1.ObjectMeta{Name: "fleet-c"}, Status: kueuev1beta2.ClusterQueueStatus{FlavorsReservation: []kueuev1beta2.FlavorUsage{gpus("a100", 8)}}},
	}
	lqs := []kueuev1beta2.LocalQueue{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-a", Name: "user-queue"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "fleet-a"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: "user-queue"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "fleet-b"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-c", Name: "user-queue"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "fleet-c"}},
	}
	wl := func(ns, name string, created, pods int, perPod int64, model string) kueuev1beta2.Workload {
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: *resource.NewQuantity(perPod, resource.DecimalSI)}}}}}
		if model != "" {
			spec.NodeSelector = map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: model}
		}
		return kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(created) * time.Second))},
			Spec: kueuev1beta2.WorkloadSpec{QueueName: "user-queue", PodSets: []kueuev1beta2.PodSet{{Name: "workers", Count: int32(pods), Template: corev1.PodTemplateSpec{Spec: spec}}}}}
	}
	wls := []kueuev1beta2.Workload{
		wl("ns-b", "late", 9, 1, 1, ""),
		wl("ns-b", "gang", 1, 2, 4, "H100"),
		wl("ns-a", "more", 2, 8, 1, ""),
		wl("ns-c", "ignored", 3, 1, 1, ""),
	}
	got := ViewQueue(fq, cqs, lqs, wls)
	want := QueueView{Name: "fleet", AdmissionCheck: "mk", Reclaim: "Never",
		Models: []QueueModel{{Model: "H100", GPUs: 16}, {Model: "A100", GPUs: 8}},
		Teams: []TeamView{
			{Name: "a", Namespace: "ns-a", ClusterQueue: "fleet-a", Weight: 1, Guaranteed: map[string]int64{},
				Used: map[string]int64{"H100": 12}, Demand: map[string]int64{"H100": 12, AnyModel: 8},
				// H100: b's guarantee of 4 first; of the other 12, b wants 4 more and a gets the
				// other 8. Any model: the 8 A100s no one named, b's 1 and a's 7.
				Fair:    map[string]float64{"H100": 8, AnyModel: 7},
				Pending: 1, Queue: []PendingWorkload{{Namespace: "ns-a", Name: "more", Position: 1, Pods: 8, GPUs: 8, Queued: t0.Add(2 * time.Second)}}},
			{Name: "b", Namespace: "ns-b", ClusterQueue: "fleet-b", Weight: 1, Guaranteed: map[string]int64{"H100": 4},
				Used: map[string]int64{}, Demand: map[string]int64{"H100": 8, AnyModel: 1},
				Fair:    map[string]float64{"H100": 8, AnyModel: 1},
				Pending: 2, Queue: []PendingWorkload{
					{Namespace: "ns-b", Name: "gang", Position: 1, Pods: 2, GPUs: 8, Model: "H100", Queued: t0.Add(time.Second)},
					{Namespace: "ns-b", Name: "late", Position: 2, Pods: 1, GPUs: 1, Queued: t0.Add(9 * time.Second)}}},
			{Name: "c", Namespace: "ns-c", ClusterQueue: "fleet-c", Weight: 2, Guaranteed: map[string]int64{},
				Used: map[string]int64{}, Demand: map[string]int64{}, Fair: map[string]float64{}, Queue: []PendingWorkload{}},
		}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("ViewQueue (-want +got):\n%s", diff)
	}

	fq.Status.Conditions[0] = metav1.Condition{Type: queuev1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: queuev1alpha1.ReasonCheckMissing, Message: "no AdmissionCheck mk"}
	if got := ViewQueue(fq, cqs, lqs, wls).NotReady; got != "AdmissionCheckMissing: no AdmissionCheck mk" {
		t.Errorf("NotReady of a FleetQueue that is not Ready is %q, want its reason and message", got)
	}
}
