package explain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

func runExplainWorkload(objs []client.Object, args ...string) (string, error) {
	return runExplainOf("workload", objs, args...)
}

// queued is a hub with two workloads of ClusterQueue cq waiting for quota, in namespace ml (the
// context's), and no MultiKueue check.
func queued() []client.Object {
	pending := func(name string, minute int) *kueuev1beta2.Workload {
		return &kueuev1beta2.Workload{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(now.Add(time.Duration(minute-60) * time.Minute))},
			Spec:       kueuev1beta2.WorkloadSpec{QueueName: "team"},
			Status: kueuev1beta2.WorkloadStatus{Conditions: []metav1.Condition{{Type: "QuotaReserved", Status: "False", Reason: "Pending",
				Message:            "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (8) > maximum capacity (4)",
				LastTransitionTime: metav1.NewTime(now)}}},
		}
	}
	return []client.Object{
		pending("first", 1), pending("second", 2),
		&kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "team"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "cq"}},
	}
}

func TestExplainWorkloadTable(t *testing.T) {
	got, err := runExplainWorkload(queued(), "second")
	if err != nil {
		t.Fatal(err)
	}
	msg := "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (8) > maximum capacity (4)"
	want := lines(
		"Workload ml/second: waiting for quota in ClusterQueue cq (position 2 of 2 pending, 1 workload ahead): "+msg,
		"Queue: LocalQueue ml/team -> ClusterQueue cq, priority 0",
		"Position: 2 of 2 pending in ClusterQueue cq, 1 ahead: ml/first (priority 0)",
		"  ("+fleetview.QueueOrderComputed+"; counted in all namespaces)",
		"",
		"CONDITION       STATUS   REASON    MESSAGE",
		"QuotaReserved   False    Pending   "+msg,
		"",
		"No MultiKueue admission check: the workload runs on the hub's own nodes, if any.",
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}

	out, err := runExplainWorkload(queued(), "ml/first", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var e fleetview.WorkloadExplanation
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("decoding %s: %v", out, err)
	}
	if e.Phase != "QueuedForQuota" || e.Queue == nil || e.Queue.Position != 1 || e.Queue.Ahead != 0 {
		t.Errorf("json: phase %q, queue %+v; want QueuedForQuota at position 1", e.Phase, e.Queue)
	}
}

func TestExplainWorkloadBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"missing": {args: []string{"ml/nope"},
			want: "workload ml/nope is not on the hub of kubeconfig hub.kubeconfig: list them with `kubectl get workloads.kueue.x-k8s.io -n ml`"},
		"missing, in the context's namespace": {args: []string{"nope"},
			want: "workload ml/nope is not on the hub of kubeconfig hub.kubeconfig"},
		"bad format":  {args: []string{"ml/first", "-o", "yaml"}, want: `--output (-o) "yaml" is not supported: use -o table or -o json`},
		"bad name":    {args: []string{"ml/a/b"}, want: `workload "ml/a/b": give it as NAMESPACE/NAME, or NAME in the kubeconfig context's namespace`},
		"no name":     {args: []string{"ml/"}, want: `workload "ml/": give it as NAMESPACE/NAME`},
		"no argument": {args: nil, want: "accepts 1 arg(s), received 0"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runExplainWorkload(queued(), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one holding %q", err, tc.want)
			}
		})
	}
}
