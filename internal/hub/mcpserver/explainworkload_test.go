package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// TestExplainWorkloadTool calls explain_workload against a fake hub: the answer is what
// fleetview.ExplainWorkload (and so `flotilla explain workload -o json`) gives, and a missing
// workload is an error naming the argument and the tool that lists them.
func TestExplainWorkloadTool(t *testing.T) {
	wl := &kueuev1beta2.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", UID: "uid-train", CreationTimestamp: metav1.NewTime(now)},
		Spec:       kueuev1beta2.WorkloadSpec{QueueName: "team"},
		Status: kueuev1beta2.WorkloadStatus{Conditions: []metav1.Condition{{Type: "QuotaReserved", Status: "False", Reason: "Pending",
			Message: "couldn't assign flavors to pod set main: insufficient quota", LastTransitionTime: metav1.NewTime(now)}}},
	}
	lq := &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "team"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "cq"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(wl, lq).Build()
	cs := connect(t, Options{Client: c, Namespace: "ml"})

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "explain_workload", Arguments: map[string]any{"name": "train"}})
	if err != nil || res.IsError {
		t.Fatalf("explain_workload: %v %s", err, resultText(res))
	}
	var got fleetview.WorkloadExplanation
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want, err := fleetview.ExplainWorkload(context.Background(), c, "ml", "train", now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("explain_workload (-ExplainWorkload +tool):\n%s", diff)
	}
	if got.Phase != "QueuedForQuota" {
		t.Errorf("phase %q, want QueuedForQuota", got.Phase)
	}

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "explain_workload", Arguments: map[string]any{"name": "nope"}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := resultText(res); !res.IsError || !strings.Contains(msg, `argument "name": no Workload "nope" in namespace ml: list them with kueue_workloads`) {
		t.Errorf("a missing workload: %q, want an error naming the argument", msg)
	}
}
