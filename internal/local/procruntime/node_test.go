package procruntime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

var testCapacity = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("8"),
	corev1.ResourceMemory: resource.MustParse("16Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

// conds turns "Type=Status@minute" into conditions: transition at that minute after testNow,
// heartbeat at heartbeat.
func conds(heartbeat time.Time, specs ...string) []corev1.NodeCondition {
	var out []corev1.NodeCondition
	for _, s := range specs {
		typ, rest, _ := strings.Cut(s, "=")
		status, minute, _ := strings.Cut(rest, "@")
		m, _ := time.ParseDuration(minute + "m")
		c := corev1.NodeCondition{
			Type: corev1.NodeConditionType(typ), Status: corev1.ConditionStatus(status),
			LastHeartbeatTime: metav1.NewTime(heartbeat), LastTransitionTime: metav1.NewTime(testNow.Add(m)),
		}
		for _, o := range nodeConditions {
			if o.t == c.Type {
				c.Reason, c.Message = o.reason, o.message
			}
		}
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionFalse {
			c.Reason, c.Message = "KubeletNotReady", "the process runtime of this node has stopped"
		}
		out = append(out, c)
	}
	return out
}

func TestNodeStatus(t *testing.T) {
	now := testNow.Add(10 * time.Minute)
	healthy := []string{"MemoryPressure=False@10", "DiskPressure=False@10", "PIDPressure=False@10"}
	cases := map[string]struct {
		old   []corev1.NodeCondition
		ready bool
		want  []corev1.NodeCondition
	}{
		"a new node turns Ready now": {
			ready: true,
			want:  conds(now, append(healthy, "Ready=True@10")...),
		},
		"a Ready node keeps its transition times": {
			old:   conds(testNow, "MemoryPressure=False@1", "DiskPressure=False@1", "PIDPressure=False@1", "Ready=True@2"),
			ready: true,
			want:  conds(now, "MemoryPressure=False@1", "DiskPressure=False@1", "PIDPressure=False@1", "Ready=True@2"),
		},
		"an Unknown node (the lease had expired) turns Ready now": {
			old:   conds(testNow, "MemoryPressure=False@1", "DiskPressure=False@1", "PIDPressure=False@1", "Ready=Unknown@5"),
			ready: true,
			want:  conds(now, "MemoryPressure=False@1", "DiskPressure=False@1", "PIDPressure=False@1", "Ready=True@10"),
		},
		"a stopping node turns NotReady": {
			old:   conds(testNow, "MemoryPressure=False@1", "DiskPressure=False@1", "PIDPressure=False@1", "Ready=True@2"),
			ready: false,
			want:  conds(now, "MemoryPressure=False@1", "DiskPressure=False@1", "PIDPressure=False@1", "Ready=False@10"),
		},
		"a condition the kubelet does not own is kept": {
			old:   conds(testNow, "NetworkUnavailable=False@3"),
			ready: true,
			want:  append(conds(testNow, "NetworkUnavailable=False@3"), conds(now, append(healthy, "Ready=True@10")...)...),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := nodeStatus(corev1.NodeStatus{Conditions: tc.old}, "proc-1", localIP, testCapacity, tc.ready, metav1.NewTime(now))
			if diff := cmp.Diff(tc.want, got.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(testCapacity, got.Allocatable); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
			wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: "proc-1"}}
			if diff := cmp.Diff(wantAddrs, got.Addresses); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusChanged(t *testing.T) {
	base := nodeStatus(corev1.NodeStatus{}, "proc-1", localIP, testCapacity, true, metav1.NewTime(testNow))
	cases := map[string]struct {
		next corev1.NodeStatus
		want bool
	}{
		"only a later heartbeat": {next: nodeStatus(base, "proc-1", localIP, testCapacity, true, metav1.NewTime(testNow.Add(time.Minute))), want: false},
		"not ready":              {next: nodeStatus(base, "proc-1", localIP, testCapacity, false, metav1.NewTime(testNow.Add(time.Minute))), want: true},
		"less memory": {next: nodeStatus(base, "proc-1", localIP, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}, true,
			metav1.NewTime(testNow.Add(time.Minute))), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := statusChanged(base, tc.next); got != tc.want {
				t.Errorf("statusChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWithoutNotReadyTaints(t *testing.T) {
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	cases := map[string]struct {
		taints      []corev1.Taint
		want        []corev1.Taint
		wantRemoved bool
	}{
		"none": {},
		"admission's not-ready taint and the lifecycle controller's": {
			taints: []corev1.Taint{
				{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
				gpu,
				{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
				{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
			},
			want: []corev1.Taint{gpu}, wantRemoved: true,
		},
		"someone else's taint stays": {taints: []corev1.Taint{gpu}, want: []corev1.Taint{gpu}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, removed := withoutNotReadyTaints(tc.taints)
			if diff := cmp.Diff(tc.want, got); diff != "" || removed != tc.wantRemoved {
				t.Errorf("removed %v, want %v; taints (-want +got):\n%s", removed, tc.wantRemoved, diff)
			}
		})
	}
}

func TestRenewedLease(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "proc-1", UID: "uid-1"}}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "proc-1", UID: "uid-1"}
	now := metav1.NewMicroTime(testNow)
	want := func(owners ...metav1.OwnerReference) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "proc-1", OwnerReferences: owners},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr("proc-1"), LeaseDurationSeconds: ptr(int32(40)), RenewTime: &now},
		}
	}
	cases := map[string]struct {
		old  *coordinationv1.Lease
		node *corev1.Node
		want *coordinationv1.Lease
	}{
		"new":                 {old: &coordinationv1.Lease{}, node: node, want: want(owner)},
		"renewed, owner kept": {old: want(owner), node: node, want: want(owner)},
		"a node without uid (not stored yet) owns nothing": {
			old: &coordinationv1.Lease{}, node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "proc-1"}}, want: want(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, renewedLease(tc.old, tc.node, 40, now)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNodeKeeper runs a NodeKeeper on a fake clientset whose node creation adds the not-ready
// taint, as the API server's admission does: the node is registered with its labels and
// capacity, turns Ready and untainted, its Lease is renewed every 10 s by the clock, its status
// is written again only after 5 minutes, and it turns NotReady when the keeper stops.
func TestNodeKeeper(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "nodes", func(a clienttesting.Action) (bool, runtime.Object, error) {
		n := a.(clienttesting.CreateAction).GetObject().(*corev1.Node)
		n.UID = types.UID("uid-" + n.Name)
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
		return false, nil, nil
	})
	clk := clocktesting.NewFakeClock(testNow)
	k := &NodeKeeper{Client: cs, Name: "proc-1", Register: true, Labels: map[string]string{"zone": "a"}, Capacity: testCapacity, Clock: clk}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()

	getNode := func() *corev1.Node {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), "proc-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// round waits for the keeper to wait on the clock, moves the clock by d, and waits until
	// the Lease is renewed at the new time.
	round := func(d time.Duration) {
		t.Helper()
		eventually(t, "the keeper to wait for its next round", clk.HasWaiters)
		clk.Step(d)
		eventually(t, "the lease renewed at "+clk.Now().String(), func() bool {
			l, err := cs.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), "proc-1", metav1.GetOptions{})
			return err == nil && l.Spec.RenewTime.Time.Equal(clk.Now())
		})
	}
	round(0)
	n := getNode()
	wantLabels := map[string]string{"zone": "a", NodeLabel: "true", corev1.LabelHostname: "proc-1", corev1.LabelOSStable: "linux", corev1.LabelArchStable: n.Labels[corev1.LabelArchStable]}
	if diff := cmp.Diff(wantLabels, n.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if len(n.Spec.Taints) != 0 || !nodeReady(n.Status) {
		t.Errorf("after the first round: taints %v, Ready %v; want no taint and Ready", n.Spec.Taints, nodeReady(n.Status))
	}
	if diff := cmp.Diff(testCapacity, n.Status.Capacity); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	heartbeat := func() time.Time { return getNode().Status.Conditions[3].LastHeartbeatTime.Time }

	round(NodeRenewInterval)
	if got := heartbeat(); !got.Equal(testNow) {
		t.Errorf("after 10 s the status was written again (heartbeat %s); want it written only when changed or every 5 minutes", got)
	}
	round(nodeStatusReportPeriod)
	if got, want := heartbeat(), testNow.Add(NodeRenewInterval+nodeStatusReportPeriod); !got.Equal(want) {
		t.Errorf("after 5 minutes the status heartbeat is %s, want %s", got, want)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if nodeReady(getNode().Status) {
		t.Error("the node is still Ready after its keeper stopped")
	}
}

func TestNodeKeeperWithoutNode(t *testing.T) {
	k := &NodeKeeper{Client: fake.NewClientset(), Name: "proc-1", Clock: clocktesting.NewFakeClock(testNow)}
	err := k.sync(context.Background())
	if err == nil || !strings.Contains(err.Error(), "node proc-1 does not exist: create it, or set NodeKeeper.Register") {
		t.Errorf("sync = %v, want an error that names the node and the fix", err)
	}
	if err := (&NodeKeeper{}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "NodeKeeper.Clock is nil") {
		t.Errorf("Run without fields = %v, want an error naming them", err)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
