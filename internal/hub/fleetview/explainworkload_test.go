package fleetview

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// wl is a Workload of LocalQueue "team" created at t0+created, with priority (nil for none) and
// conditions conds.
func wl(ns, name string, created time.Duration, priority *int32, conds ...metav1.Condition) kueuev1beta2.Workload {
	w := kueuev1beta2.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0.Add(created))},
		Spec:       kueuev1beta2.WorkloadSpec{QueueName: "team", Priority: priority},
	}
	w.Status.Conditions = conds
	return w
}

func cond(typ string, status metav1.ConditionStatus, reason string, at time.Duration) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(t0.Add(at))}
}

func TestPendingOrder(t *testing.T) {
	lqs := map[string]string{"a/team": "cq", "b/team": "cq", "c/team": "other"}
	inactive := wl("a", "inactive", 0, nil)
	inactive.Spec.Active = ptr.To(false)
	wls := []kueuev1beta2.Workload{
		wl("a", "old", 1*time.Minute, nil),
		wl("b", "new", 5*time.Minute, nil),
		wl("b", "urgent", 9*time.Minute, ptr.To[int32](100)),
		// Evicted by an admission check (its worker lost) at +7m: ordered by that time.
		wl("a", "requeued", 0, nil, cond("Evicted", metav1.ConditionTrue, kueuev1beta2.WorkloadEvictedByAdmissionCheck, 7*time.Minute)),
		// Evicted by preemption: ordered by its creation still.
		wl("a", "preempted", 2*time.Minute, nil, cond("Evicted", metav1.ConditionTrue, kueuev1beta2.WorkloadEvictedByPreemption, 8*time.Minute)),
		wl("a", "same-time-b", 3*time.Minute, nil),
		wl("a", "same-time-a", 3*time.Minute, nil),
		wl("a", "holds-quota", 0, nil, cond("QuotaReserved", metav1.ConditionTrue, "QuotaReserved", time.Minute)),
		wl("a", "done", 0, nil, cond("Finished", metav1.ConditionTrue, "Succeeded", time.Minute)),
		wl("c", "other-queue", 0, nil),
		inactive,
	}
	var got []string
	for _, w := range PendingOrder(wls, lqs, "cq") {
		got = append(got, w.Namespace+"/"+w.Name)
	}
	want := []string{"b/urgent", "a/old", "a/preempted", "a/same-time-a", "a/same-time-b", "b/new", "a/requeued"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PendingOrder (-want +got):\n%s", diff)
	}

	order := PendingOrder(wls, lqs, "cq")
	pos := Position(order[3], order)
	wantPos := &QueuePosition{Position: 4, Ahead: 3, Pending: 7, QueueOrderTime: "2026-12-02T12:03:00Z", Computed: QueueOrderComputed,
		First: []QueuedWorkload{
			{Namespace: "b", Name: "urgent", Priority: 100, QueueOrderTime: "2026-12-02T12:09:00Z"},
			{Namespace: "a", Name: "old", QueueOrderTime: "2026-12-02T12:01:00Z"},
			{Namespace: "a", Name: "preempted", QueueOrderTime: "2026-12-02T12:02:00Z"},
		}}
	if diff := cmp.Diff(wantPos, pos); diff != "" {
		t.Errorf("Position (-want +got):\n%s", diff)
	}
	if last := Position(order[6], order); last.Ahead != 6 || len(last.First) != MaxAhead || last.First[0].Name != "urgent" {
		t.Errorf("the last of 7: %+v, want 6 ahead and the first %d named from the head", last, MaxAhead)
	}
}

func TestSummarize(t *testing.T) {
	c := func(typ, status, reason, msg string) WorkloadCondition {
		return WorkloadCondition{Type: typ, Status: status, Reason: reason, Message: msg}
	}
	worker := func(name string, active bool, fit, msg string, nominated bool) WorkerVerdict {
		return WorkerVerdict{Cluster: name, Active: active, Fit: workloadfit.State(fit), Message: msg, Nominated: nominated}
	}
	quota := c("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq")
	mk := func(state string, order []string, ws ...WorkerVerdict) *MultiKueueExplanation {
		return &MultiKueueExplanation{AdmissionCheck: "multikueue", State: state, Config: "multikueue", Workers: ws, OfferOrder: order}
	}
	cases := map[string]struct {
		e                    WorkloadExplanation
		wantPhase, wantSumma string
	}{
		"finished": {
			e:         WorkloadExplanation{Active: true, Conditions: []WorkloadCondition{quota, c("Finished", "True", "Succeeded", "Job finished successfully")}, ClusterName: "gpu-west"},
			wantPhase: "Finished", wantSumma: "finished: Succeeded: Job finished successfully",
		},
		"running": {
			e:         WorkloadExplanation{Active: true, Conditions: []WorkloadCondition{quota, c("Admitted", "True", "Admitted", "")}, ClusterName: "gpu-west"},
			wantPhase: "Running", wantSumma: "running on gpu-west",
		},
		"inactive": {
			e:         WorkloadExplanation{Active: false, Conditions: []WorkloadCondition{c("Evicted", "True", "Deactivated", "")}},
			wantPhase: "Inactive", wantSumma: "deactivated (spec.active is false): it does not queue until spec.active is true again",
		},
		"evicted": {
			e:         WorkloadExplanation{Active: true, Conditions: []WorkloadCondition{quota, c("Evicted", "True", "AdmissionCheck", "worker gpu-west lost")}},
			wantPhase: "Evicted", wantSumma: "evicted: AdmissionCheck: worker gpu-west lost; Kueue queues it again once its pods have stopped",
		},
		"waiting for quota, with its place": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq",
				Conditions: []WorkloadCondition{c("QuotaReserved", "False", "Pending", "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + current podset request (8) > maximum capacity (4)")},
				Queue:      &QueuePosition{Position: 3, Ahead: 2, Pending: 5}},
			wantPhase: "QueuedForQuota",
			wantSumma: "waiting for quota in ClusterQueue cq (position 3 of 5 pending, 2 workloads ahead): couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + current podset request (8) > maximum capacity (4)",
		},
		"not tried yet": {
			e:         WorkloadExplanation{Active: true, ClusterQueue: "cq", Queue: &QueuePosition{Position: 1, Pending: 1}},
			wantPhase: "QueuedForQuota", wantSumma: "waiting for quota in ClusterQueue cq (position 1 of 1 pending, 0 workloads ahead): Kueue has not tried to admit it yet",
		},
		"no LocalQueue": {
			e:         WorkloadExplanation{Namespace: "ml", LocalQueue: "team", Active: true, LocalQueueMissing: true},
			wantPhase: "QueuedForQuota", wantSumma: "not queued: LocalQueue ml/team does not exist on the hub; create it or submit to another (`kubectl get localqueues -n ml`)",
		},
		"no worker fits": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq", Conditions: []WorkloadCondition{quota}, MultiKueue: mk("Pending", nil,
				worker("gpu-west", true, "NoFit", "needs 2 pods with 8 H100 each: only 1 pod fits", false),
				worker("gpu-east", false, "Fits", "all fit", false))},
			wantPhase: "NoWorkerFits", wantSumma: "no worker fits its pods: gpu-west: needs 2 pods with 8 H100 each: only 1 pod fits",
		},
		"offered": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq", Conditions: []WorkloadCondition{quota}, NominatedClusterNames: []string{"gpu-west"},
				MultiKueue: mk("Pending", []string{"gpu-west"}, worker("gpu-west", true, "Fits", "fits", true))},
			wantPhase: "Dispatching", wantSumma: "offered to gpu-west; waiting for it to admit it",
		},
		"offered to two": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq", Conditions: []WorkloadCondition{quota}, NominatedClusterNames: []string{"gpu-west", "gpu-east"},
				MultiKueue: mk("Pending", []string{"gpu-west", "gpu-east"}, worker("gpu-west", true, "Fits", "", true), worker("gpu-east", true, "Unknown", "", true))},
			wantPhase: "Dispatching", wantSumma: "offered to gpu-west, gpu-east; waiting for one of them to admit it",
		},
		"not offered yet": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq", Conditions: []WorkloadCondition{quota},
				MultiKueue: mk("Pending", []string{"gpu-east"}, worker("gpu-east", true, "Unknown", "", false))},
			wantPhase: "Dispatching", wantSumma: "waiting for the dispatcher to offer it to gpu-east",
		},
		"no active worker": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq", Conditions: []WorkloadCondition{quota},
				MultiKueue: &MultiKueueExplanation{AdmissionCheck: "multikueue", State: "Pending", Config: "mk", Workers: []WorkerVerdict{{Cluster: "gpu-west", ActiveMessage: "BadConfig: no kubeconfig"}}}},
			wantPhase: "NoActiveWorker", wantSumma: "no active worker in MultiKueueConfig mk (gpu-west: BadConfig: no kubeconfig)",
		},
		"rejected": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq", Conditions: []WorkloadCondition{quota},
				MultiKueue: &MultiKueueExplanation{AdmissionCheck: "multikueue", State: "Rejected", Message: "no worker"}},
			wantPhase: "Rejected", wantSumma: "rejected by MultiKueue admission check multikueue: no worker",
		},
		"another check": {
			e: WorkloadExplanation{Active: true, ClusterQueue: "cq", Conditions: []WorkloadCondition{quota},
				AdmissionChecks: []AdmissionCheck{{Name: "prov", State: "Pending", Message: "provisioning"}}},
			wantPhase: "WaitingForChecks", wantSumma: "holds quota in ClusterQueue cq; waiting for admission check prov (Pending: provisioning)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			phase, summary := Summarize(&tc.e)
			if diff := cmp.Diff([]string{tc.wantPhase, tc.wantSumma}, []string{phase, summary}); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}

// usage is worker cluster's ResourceUsage at t0: nodes H100 nodes with free GPUs each.
func usage(cluster string, nodes int32, free int64) *usagev1alpha1.ResourceUsage {
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	return &usagev1alpha1.ResourceUsage{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName},
		Status: usagev1alpha1.ResourceUsageStatus{
			ObservedTime: &metav1.Time{Time: t0.Add(-time.Second)}, ValidUntil: &metav1.Time{Time: t0.Add(time.Minute)},
			Resources: []usagev1alpha1.ResourceFigures{{Name: usagev1alpha1.ResourceNvidiaGPU, Model: "H100", Capacity: q(8 * int64(nodes)),
				Allocatable: q(8 * int64(nodes)), Free: q(free * int64(nodes)), FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q(free), Nodes: nodes}}}},
		},
	}
}

func TestExplainWorkload(t *testing.T) {
	active := func(name string, ok bool) *kueuev1beta2.MultiKueueCluster {
		st := metav1.ConditionTrue
		if !ok {
			st = metav1.ConditionFalse
		}
		return &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: kueuev1beta2.MultiKueueClusterStatus{
			Conditions: []metav1.Condition{{Type: kueuev1beta2.MultiKueueClusterActive, Status: st, Reason: "BadConfig", Message: "no kubeconfig"}}}}
	}
	gpus := corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: resource.MustParse("8")}
	podSets := []kueuev1beta2.PodSet{{Name: "workers", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: "H100"},
		Containers:   []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: gpus}}}}}}}

	dispatching := wl("ml", "train", 0, nil, cond("QuotaReserved", metav1.ConditionTrue, "QuotaReserved", time.Minute))
	dispatching.Spec.PodSets = podSets
	dispatching.Status.Admission = &kueuev1beta2.Admission{ClusterQueue: "cq"}
	dispatching.Status.AdmissionChecks = []kueuev1beta2.AdmissionCheckState{{Name: "multikueue", State: kueuev1beta2.CheckStatePending}}
	dispatching.Status.NominatedClusterNames = []string{"gpu-east"}
	ahead := wl("other", "ahead", 2*time.Minute, ptr.To[int32](10))
	waiting := wl("ml", "waiting", 3*time.Minute, nil,
		metav1.Condition{Type: "QuotaReserved", Status: metav1.ConditionFalse, Reason: "Pending", Message: "couldn't assign flavors to pod set workers: insufficient quota"})
	waiting.Spec.PodSets = podSets

	objs := []client.Object{
		&dispatching, &ahead, &waiting,
		&kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "team"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "cq"}},
		&kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "team"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "cq"}},
		&kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueuev1beta2.ClusterQueueSpec{
			AdmissionChecksStrategy: &kueuev1beta2.AdmissionChecksStrategy{AdmissionChecks: []kueuev1beta2.AdmissionCheckStrategyRule{{Name: "multikueue"}}}}},
		&kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "multikueue"}, Spec: kueuev1beta2.AdmissionCheckSpec{
			ControllerName: kueuev1beta2.MultiKueueControllerName,
			Parameters:     &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: kueuev1beta2.GroupVersion.Group, Kind: "MultiKueueConfig", Name: "ranked"}}},
		&kueuev1beta2.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "ranked"}, Spec: kueuev1beta2.MultiKueueConfigSpec{Clusters: []string{"gpu-west", "gpu-east", "gpu-north"}}},
		active("gpu-west", true), active("gpu-east", true), active("gpu-north", false),
		usage("gpu-west", 1, 8),
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	ctx := context.Background()

	got, err := ExplainWorkload(ctx, c, "ml", "train", t0)
	if err != nil {
		t.Fatal(err)
	}
	noFigures := func(cluster string) string {
		return "no ResourceUsage " + cluster + "/resource-usage: enable the resource-usage add-on: `flotilla addon enable resource-usage --clusters " + cluster + "`"
	}
	wantMK := &MultiKueueExplanation{AdmissionCheck: "multikueue", State: "Pending", Config: "ranked", OfferOrder: []string{"gpu-east"},
		Workers: []WorkerVerdict{
			{Rank: 1, Cluster: "gpu-west", Active: true, Fit: workloadfit.NoFit, Message: "needs 2 pods with 8 H100 each: only 1 pod fits on its nodes (free per node: 8 on 1 node)"},
			{Rank: 2, Cluster: "gpu-east", Active: true, Fit: workloadfit.Unknown, Message: noFigures("gpu-east"), Nominated: true},
			{Rank: 3, Cluster: "gpu-north", ActiveMessage: "BadConfig: no kubeconfig", Fit: workloadfit.Unknown, Message: noFigures("gpu-north")},
		}}
	if diff := cmp.Diff(wantMK, got.MultiKueue); diff != "" {
		t.Errorf("MultiKueue (-want +got):\n%s", diff)
	}
	if want := "offered to gpu-east; waiting for it to admit it"; got.Summary != want || got.Phase != "Dispatching" || got.Queue != nil {
		t.Errorf("summary %q (%s), queue %+v; want %q (Dispatching) and no queue position", got.Summary, got.Phase, got.Queue, want)
	}

	got, err = ExplainWorkload(ctx, c, "ml", "waiting", t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Queue == nil || got.Queue.Position != 2 || got.Queue.Ahead != 1 || got.Queue.Scope != "all namespaces" {
		t.Fatalf("queue %+v, want position 2 behind other/ahead, of all namespaces", got.Queue)
	}
	want := "waiting for quota in ClusterQueue cq (position 2 of 2 pending, 1 workload ahead): couldn't assign flavors to pod set workers: insufficient quota"
	if got.Summary != want || got.ClusterQueue != "cq" {
		t.Errorf("summary %q in ClusterQueue %q, want %q in cq", got.Summary, got.ClusterQueue, want)
	}
	// Without quota it has no admission check yet: the ClusterQueue's is shown.
	if got.MultiKueue == nil || got.MultiKueue.AdmissionCheck != "multikueue" || got.MultiKueue.State != "" || len(got.MultiKueue.Workers) != 3 {
		t.Errorf("MultiKueue %+v, want the ClusterQueue's check multikueue, no state, 3 workers", got.MultiKueue)
	}

	if _, err := ExplainWorkload(ctx, c, "ml", "missing", t0); !apierrors.IsNotFound(err) {
		t.Errorf("a missing workload: %v, want NotFound", err)
	}
}
