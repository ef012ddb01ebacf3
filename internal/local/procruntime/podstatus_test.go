package procruntime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodPhase(t *testing.T) {
	t0 := metav1.NewTime(testNow)
	run := func(init bool) *containerRun {
		return &containerRun{init: init, state: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}}}
	}
	exited := func(init bool, code int) *containerRun {
		return &containerRun{init: init, state: terminated(code, t0, t0)}
	}
	waitingFor := func(init bool) *containerRun { return &containerRun{init: init, state: waiting("PodInitializing", "")} }
	backingOff := func() *containerRun {
		return &containerRun{state: waiting("CrashLoopBackOff", ""), lastState: terminated(1, t0, t0)}
	}
	cases := map[string]struct {
		policy corev1.RestartPolicy
		runs   []*containerRun
		want   corev1.PodPhase
	}{
		"nothing started":                  {policy: corev1.RestartPolicyAlways, runs: []*containerRun{waitingFor(false)}, want: corev1.PodPending},
		"init container running":           {policy: corev1.RestartPolicyAlways, runs: []*containerRun{run(true), waitingFor(false)}, want: corev1.PodPending},
		"init container failed, Never":     {policy: corev1.RestartPolicyNever, runs: []*containerRun{exited(true, 1), waitingFor(false)}, want: corev1.PodFailed},
		"init container failed, OnFailure": {policy: corev1.RestartPolicyOnFailure, runs: []*containerRun{exited(true, 1), waitingFor(false)}, want: corev1.PodPending},
		"init done, container running":     {policy: corev1.RestartPolicyNever, runs: []*containerRun{exited(true, 0), run(false)}, want: corev1.PodRunning},
		"one running, one exited":          {policy: corev1.RestartPolicyNever, runs: []*containerRun{run(false), exited(false, 1)}, want: corev1.PodRunning},
		"all exited 0, Never":              {policy: corev1.RestartPolicyNever, runs: []*containerRun{exited(false, 0), exited(false, 0)}, want: corev1.PodSucceeded},
		"one failed, Never":                {policy: corev1.RestartPolicyNever, runs: []*containerRun{exited(false, 0), exited(false, 2)}, want: corev1.PodFailed},
		"all exited 0, OnFailure":          {policy: corev1.RestartPolicyOnFailure, runs: []*containerRun{exited(false, 0)}, want: corev1.PodSucceeded},
		"failed, OnFailure restarts":       {policy: corev1.RestartPolicyOnFailure, runs: []*containerRun{exited(false, 2)}, want: corev1.PodRunning},
		"exited, Always restarts":          {policy: corev1.RestartPolicyAlways, runs: []*containerRun{exited(false, 0)}, want: corev1.PodRunning},
		"backing off before a restart":     {policy: corev1.RestartPolicyAlways, runs: []*containerRun{backingOff()}, want: corev1.PodRunning},
		"one started, one not yet":         {policy: corev1.RestartPolicyNever, runs: []*containerRun{exited(false, 0), waitingFor(false)}, want: corev1.PodRunning},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := podPhase(tc.policy, tc.runs); got != tc.want {
				t.Errorf("podPhase = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPodStatus(t *testing.T) {
	start := metav1.NewTime(testNow)
	now := metav1.NewTime(testNow.Add(time.Minute))
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: start},
		}},
	}
	runs := []*containerRun{
		{name: "setup", image: "busybox", init: true, pid: 10, state: terminated(0, start, start)},
		{name: "app", image: "example.com/app", pid: 11, restarts: 1, state: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, lastState: terminated(137, start, start)},
	}
	want := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "127.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP:     "127.0.0.1",
		PodIPs:    []corev1.PodIP{{IP: "127.0.0.1"}},
		StartTime: &start,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		InitContainerStatuses: []corev1.ContainerStatus{{
			Name: "setup", Image: "busybox", ContainerID: "process://10", Ready: true, Started: ptr(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: start, FinishedAt: start}},
		}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: "example.com/app", ContainerID: "process://11", Ready: true, Started: ptr(true), RestartCount: 1,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", StartedAt: start, FinishedAt: start}},
		}},
	}
	if diff := cmp.Diff(want, podStatus(pod, runs, start, now, localIP)); diff != "" {
		t.Errorf("podStatus (-want +got):\n%s", diff)
	}
}
