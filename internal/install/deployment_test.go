package install

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// A wait that fails on a crash-looping container says so, with the end of the container's
// previous output (client-go's fake answers every log request with "fake logs"); a pod that is
// only not ready yet gets no output appended.
func TestWaitDeploymentShowsCrashOutput(t *testing.T) {
	labels := map[string]string{"app": "hub"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hub", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1},
	}
	pod := func(name string, st corev1.ContainerStatus) *corev1.Pod {
		st.Name = "hub"
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{st}},
		}
	}
	crashing := pod("hub-crash", corev1.ContainerStatus{
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}},
	})
	starting := pod("hub-starting", corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	// The only node is not Ready: the scheduler's own reason, with where to look.
	unscheduled := pod("hub-pending", corev1.ContainerStatus{})
	unscheduled.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.",
	}}}

	for name, tc := range map[string]struct {
		pod     *corev1.Pod
		want    []string
		notWant string
	}{
		"crash loop": {pod: crashing, want: []string{
			"pod hub-crash: container hub CrashLoopBackOff: back-off 10s",
			"last lines of pod hub-crash, container hub, before it ended (exit code 2):\n  fake logs",
		}},
		"not ready yet": {pod: starting, want: []string{"container hub running, not ready yet"}, notWant: "last lines"},
		"a node that is not Ready": {pod: unscheduled, want: []string{
			"pod hub-pending not scheduled: 0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. " +
				"(a node is not Ready: see kubectl get nodes and the node's kubelet)",
		}, notWant: "last lines"},
	} {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset(dep, tc.pod)
			err := WaitDeployment(context.Background(), cs, "ns", "hub", 0, nil, clocktesting.NewFakeClock(time.Unix(0, 0)))
			if err == nil {
				t.Fatal("WaitDeployment succeeded on a Deployment with no available replica")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("error has %q:\n%v", tc.notWant, err)
			}
		})
	}
}

func TestUsableLog(t *testing.T) {
	for raw, want := range map[string]bool{
		"Error: unknown flag: --no-such-flag\n": true,
		"":                                      false,
		" \n":                                   false,
		`failed to try resolving symlinks in path "/var/log/pods/ns_hub-1_uid/hub/2.log": lstat /var/log/pods/ns_hub-1_uid/hub/2.log: no such file or directory`: false,
	} {
		if got := usableLog(raw); got != want {
			t.Errorf("usableLog(%q) = %v, want %v", raw, got, want)
		}
	}
}
