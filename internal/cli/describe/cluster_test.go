package describe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// lostAndBack is a fenced cluster that was cut off, declared lost, and came back.
func lostAndBack() (*clusterv1.ManagedCluster, *coordinationv1.Lease) {
	at := func(d time.Duration) time.Time { return now.Add(-d).UTC() }
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east",
		Labels: map[string]string{"cluster.open-cluster-management.io/clusterset": "gpus"},
		Annotations: map[string]string{fencing.AnnotationTiming: fencing.Default.String(), fencing.AnnotationEpoch: "1",
			fencing.AnnotationLostAt: at(2 * time.Minute).Format(time.RFC3339)}},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	mc.Status.Conditions = []metav1.Condition{
		{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "ok", LastTransitionTime: metav1.NewTime(at(30 * time.Second))},
		{Type: fencing.ConditionWorkloadsFenced, Status: metav1.ConditionFalse, Reason: "Healed", Message: "fenced at X; healed at Y: 2 workloads stopped, 0 resumed, 1 removed, 1 kept", LastTransitionTime: metav1.NewTime(at(29 * time.Second))},
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: "gpu-east"},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: at(3 * time.Second)}, LeaseDurationSeconds: ptr.To(int32(5))}}
	return mc, lease
}

func TestDescribeCluster(t *testing.T) {
	mc, lease := lostAndBack()
	// The loss requeued two workloads: one runs on gpu-west since, one is gone.
	mc.Annotations[fencing.AnnotationRequeued] = fencing.WithRequeued(fencing.Requeued{}, 1, []string{"team/train", "team/gone"}).String()
	moved := &kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "train"}, Status: kueuev1beta2.WorkloadStatus{ClusterName: ptr.To("gpu-west"),
		Conditions: []metav1.Condition{{Type: kueuev1beta2.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: metav1.NewTime(now.Add(-100 * time.Second))}}}}
	newClient, _ := fakeHub(interceptor.Funcs{}, mc, lease, moved)
	out, _, err := runDescribe(newClient, "cluster", "gpu-east")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Set:            gpus",
		"Heartbeat:      3s ago",
		"Failover:       fenced: lease 5s, the agent stops fenced work after 20s, the hub declares the cluster lost after 30s; epoch 1",
		"Timeline:",
		"team/train admitted on gpu-west",
		"(1 requeued workloads are gone from the hub, or you may not read them)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The timeline is in time order, whatever order the records are kept in.
	tl := out[strings.Index(out, "Timeline:"):]
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(tl), "\n")[1:] {
		_, what, timed := strings.Cut(strings.TrimSpace(l), "  ")
		if !timed {
			continue // a note, after the events
		}
		order = append(order, strings.SplitN(what, " ", 3)[0]+" "+strings.SplitN(what, " ", 3)[1])
	}
	want := []string{"last heartbeat", "the agent", "declared lost", "team/train admitted", "Available=True (ManagedClusterAvailable)", "the agent's"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("timeline order (-want +got):\n%s\n%s", diff, tl)
	}
}

func TestDescribeClusterBadInput(t *testing.T) {
	newClient, _ := fakeHub(interceptor.Funcs{})
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no name":   {args: []string{"cluster"}, want: "takes one cluster name, got 0 arguments"},
		"two names": {args: []string{"cluster", "a", "b"}, want: "takes one cluster name, got 2 arguments"},
		"not found": {args: []string{"cluster", "nope"}, want: "no ManagedCluster nope on the hub"},
	} {
		if _, _, err := runDescribe(newClient, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want one containing %q", name, err, tc.want)
		}
	}
}
