//go:build integration

package explainworkload

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	explaincli "github.com/flotilla/flotilla/internal/cli/explain"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/core/workloadfit"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
	"github.com/flotilla/flotilla/internal/local/kueuesetup"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	h100     = "NVIDIA-H100-80GB-HBM3"
	mkCheck  = "mk-dispatch"
	ranking  = "mk-gpu" // the placement, its MultiKueueConfig and OCM's placement check
	ns       = kueuequeues.LocalQueueNS
	cq       = kueuequeues.ClusterQueueName
	quotaMsg = "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor hub-flavor, " +
		"previously considered podsets requests (0) + current podset request (16) > maximum capacity (8)"
)

// explain runs `flotilla explain workload args... --kubeconfig` against the hub.
func explain(t *testing.T, env *testenv.Env, args ...string) (string, error) {
	t.Helper()
	io, out, _ := streams.Buffers()
	root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(explaincli.NewCommand(io, clock.RealClock{}))
	root.SetArgs(append(append([]string{"explain", "workload"}, args...), "--kubeconfig", env.Hub.Kubeconfig))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// workload is a Workload of the hub's LocalQueue: pods pods of 8 H100s each.
func workload(name string, pods int32, priority int32) *kueuev1beta2.Workload {
	return &kueuev1beta2.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kueuev1beta2.WorkloadSpec{QueueName: kueuequeues.LocalQueueName, Priority: ptr.To(priority), PodSets: []kueuev1beta2.PodSet{{
			Name: "main", Count: pods, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, NodeSelector: map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: h100},
				Containers: []corev1.Container{{Name: "train", Image: "trainer", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: resource.MustParse("8")}}}}}}}}},
	}
}

// setStatus writes the workload's status as Kueue would.
func setStatus(t *testing.T, c client.Client, wl *kueuev1beta2.Workload, st kueuev1beta2.WorkloadStatus) {
	t.Helper()
	wl.Status = st
	if err := c.Status().Update(context.Background(), wl); err != nil {
		t.Fatalf("status of Workload %s: %v", wl.Name, err)
	}
}

// usage gives worker cluster nodes H100 nodes with free GPUs each, valid for an hour.
func usage(t *testing.T, c client.Client, cluster string, nodes int32, free int64) {
	t.Helper()
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	u := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName}}
	testenv.Create(t, c, u)
	now := time.Now()
	u.Status = usagev1alpha1.ResourceUsageStatus{ObservedTime: &metav1.Time{Time: now}, ValidUntil: &metav1.Time{Time: now.Add(time.Hour)},
		Resources: []usagev1alpha1.ResourceFigures{{Name: usagev1alpha1.ResourceNvidiaGPU, Model: h100, Capacity: q(8 * int64(nodes)),
			Allocatable: q(8 * int64(nodes)), Free: q(free * int64(nodes)), FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q(free), Nodes: nodes}}}}}
	if err := c.Status().Update(context.Background(), u); err != nil {
		t.Fatalf("status of ResourceUsage %s: %v", cluster, err)
	}
}

func TestExplainWorkload(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	env.InstallKueueCRDs(t)
	c := env.HubClient(t)
	ctx := context.Background()

	// The hub's queues, the ranking placement's MultiKueueConfig and its workers: gpu-west first
	// (one H100 node free), gpu-east (two), gpu-north inactive.
	for _, o := range kueuesetup.Hub(ranking, mkCheck, 8) {
		testenv.Create(t, c, o)
	}
	testenv.Create(t, c, &kueuev1beta2.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: ranking},
		Spec: kueuev1beta2.MultiKueueConfigSpec{Clusters: []string{"gpu-west", "gpu-east", "gpu-north"}}})
	for _, w := range []string{"gpu-west", "gpu-east", "gpu-north"} {
		testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w}})
		mkc := &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: w},
			Spec: kueuev1beta2.MultiKueueClusterSpec{ClusterSource: kueuev1beta2.ClusterSource{ClusterProfileRef: &kueuev1beta2.ClusterProfileReference{Name: w}}}}
		testenv.Create(t, c, mkc)
		active := metav1.Condition{Type: kueuev1beta2.MultiKueueClusterActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "Connected",
			LastTransitionTime: metav1.Now()}
		if w == "gpu-north" {
			active.Status, active.Reason, active.Message = metav1.ConditionFalse, "ClientConnectionFailed", "the worker's API server does not answer"
		}
		mkc.Status.Conditions = []metav1.Condition{active}
		if err := c.Status().Update(ctx, mkc); err != nil {
			t.Fatal(err)
		}
	}
	usage(t, c, "gpu-west", 1, 8)
	usage(t, c, "gpu-east", 2, 8)

	// train holds quota and is offered to gpu-east, the first worker where its 2 pods fit.
	train := workload("train", 2, 0)
	testenv.Create(t, c, train)
	now := metav1.Now()
	setStatus(t, c, train, kueuev1beta2.WorkloadStatus{
		Conditions: []metav1.Condition{{Type: kueuev1beta2.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
			Message: "Quota reserved in ClusterQueue " + cq, LastTransitionTime: now}},
		Admission: &kueuev1beta2.Admission{ClusterQueue: cq, PodSetAssignments: []kueuev1beta2.PodSetAssignment{{Name: "main",
			Flavors:       map[corev1.ResourceName]kueuev1beta2.ResourceFlavorReference{usagev1alpha1.ResourceNvidiaGPU: kueuesetup.HubFlavor},
			ResourceUsage: corev1.ResourceList{usagev1alpha1.ResourceNvidiaGPU: resource.MustParse("16")}, Count: ptr.To[int32](2)}}},
		AdmissionChecks: []kueuev1beta2.AdmissionCheckState{
			{Name: mkCheck, State: kueuev1beta2.CheckStatePending, LastTransitionTime: now, Message: ""}},
		NominatedClusterNames: []string{"gpu-east"},
	})
	// big and urgent wait for quota: urgent, of higher priority, first.
	pending := []metav1.Condition{{Type: kueuev1beta2.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending", Message: quotaMsg, LastTransitionTime: now}}
	big := workload("big", 2, 0)
	testenv.Create(t, c, big)
	setStatus(t, c, big, kueuev1beta2.WorkloadStatus{Conditions: pending})
	urgent := workload("urgent", 2, 100)
	testenv.Create(t, c, urgent)
	setStatus(t, c, urgent, kueuev1beta2.WorkloadStatus{Conditions: pending})

	noFit := "needs 2 pods with 8 " + h100 + " each: only 1 pod fits on its nodes (free per node: 8 on 1 node)"
	fits := h100 + ": all 2 pods fit (free per node: 8 on 2 nodes)"
	noFigures := "no ResourceUsage gpu-north/resource-usage: enable the resource-usage add-on: `flotilla addon enable resource-usage --clusters gpu-north`"

	t.Run("a dispatching workload: the workers in rank order with the dispatcher's verdicts", func(t *testing.T) {
		got, err := explain(t, env, ns+"/train")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("flotilla explain workload %s/train:\n%s", ns, got)
		want := strings.Join([]string{
			"Workload default/train: offered to gpu-east; waiting for it to admit it",
			"Queue: LocalQueue default/user-queue -> ClusterQueue cluster-queue, priority 0",
			"",
			"CONDITION       STATUS   REASON          MESSAGE",
			"QuotaReserved   True     QuotaReserved   Quota reserved in ClusterQueue cluster-queue",
			"",
			"ADMISSION CHECK   STATE     MESSAGE",
			"mk-dispatch       Pending   ",
			"",
			"MultiKueue: AdmissionCheck mk-dispatch, MultiKueueConfig mk-gpu (its order is the placement's ranking, best first); offered in order: gpu-east",
			"RANK   WORKER      ACTIVE   FIT       NOMINATED   RUNS HERE   MESSAGE",
			"1      gpu-west    yes      NoFit     no          no          " + noFit,
			"2      gpu-east    yes      Fits      yes         no          " + fits,
			"3      gpu-north   no       Unknown   no          no          inactive (ClientConnectionFailed: the worker's API server does not answer), not offered; " + noFigures,
			"",
		}, "\n")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("table (-want +got):\n%s", diff)
		}
	})

	t.Run("-o json is the explanation", func(t *testing.T) {
		out, err := explain(t, env, ns+"/train", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var got fleetview.WorkloadExplanation
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("decoding %s: %v", out, err)
		}
		want := &fleetview.MultiKueueExplanation{AdmissionCheck: mkCheck, State: "Pending", Config: ranking, OfferOrder: []string{"gpu-east"},
			Workers: []fleetview.WorkerVerdict{
				{Rank: 1, Cluster: "gpu-west", Active: true, Fit: workloadfit.NoFit, Message: noFit},
				{Rank: 2, Cluster: "gpu-east", Active: true, Fit: workloadfit.Fits, Message: fits, Nominated: true},
				{Rank: 3, Cluster: "gpu-north", ActiveMessage: "ClientConnectionFailed: the worker's API server does not answer", Fit: workloadfit.Unknown, Message: noFigures},
			}}
		if diff := cmp.Diff(want, got.MultiKueue); diff != "" {
			t.Errorf("multiKueue (-want +got):\n%s", diff)
		}
		if got.Phase != "Dispatching" || got.ClusterQueue != cq || got.Queue != nil {
			t.Errorf("phase %q, clusterQueue %q, queue %+v; want Dispatching in %s, no queue position", got.Phase, got.ClusterQueue, got.Queue, cq)
		}
	})

	t.Run("a workload waiting for quota: its place behind a higher priority", func(t *testing.T) {
		out, err := explain(t, env, ns+"/big", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var got fleetview.WorkloadExplanation
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("decoding %s: %v", out, err)
		}
		wantSummary := "waiting for quota in ClusterQueue cluster-queue (position 2 of 2 pending, 1 workload ahead): " + quotaMsg
		if got.Summary != wantSummary || got.Phase != "QueuedForQuota" {
			t.Errorf("summary %q (%s), want %q (QueuedForQuota)", got.Summary, got.Phase, wantSummary)
		}
		if q := got.Queue; q == nil || q.Position != 2 || q.Ahead != 1 || len(q.First) != 1 || q.First[0].Name != "urgent" || q.First[0].Priority != 100 {
			t.Errorf("queue %+v, want position 2 behind urgent (priority 100)", q)
		}
		table, err := explain(t, env, ns+"/big")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("flotilla explain workload %s/big:\n%s", ns, table)
		if !strings.HasPrefix(table, "Workload default/big: "+wantSummary+"\n") || !strings.Contains(table, "Position: 2 of 2 pending in ClusterQueue cluster-queue, 1 ahead: default/urgent (priority 100)") {
			t.Errorf("table:\n%s\nwant the summary and the position behind urgent", table)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		if _, err := explain(t, env, ns+"/nope"); err == nil || !strings.Contains(err.Error(),
			"workload default/nope is not on the hub of kubeconfig "+env.Hub.Kubeconfig+": list them with `kubectl get workloads.kueue.x-k8s.io -n default --kubeconfig") {
			t.Errorf("a missing workload: %v", err)
		}
		if _, err := explain(t, env, ns+"/train", "-o", "wide"); err == nil || !strings.Contains(err.Error(), `--output (-o) "wide" is not supported`) {
			t.Errorf("a wrong format: %v", err)
		}
	})
}
