package procruntime

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerRun is what the PodRunner knows of one container of a pod.
type containerRun struct {
	name, image string
	init        bool
	restarts    int32
	state       corev1.ContainerState
	lastState   corev1.ContainerState
	pid         int
}

func waiting(reason, message string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
}

func terminated(code int, started, finished metav1.Time) corev1.ContainerState {
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: reason, StartedAt: started, FinishedAt: finished}}
}

// podStatus is the status a kubelet would report for runs: phase, conditions, addresses and each
// container's state. A condition keeps its transition time from pod.Status while its status
// stays; a changed one moves at now. It has no side effects; the PodRunner writes it when it
// changed.
func podStatus(pod *corev1.Pod, runs []*containerRun, startTime, now metav1.Time, ip string) corev1.PodStatus {
	st := corev1.PodStatus{
		Phase:     podPhase(pod.Spec.RestartPolicy, runs),
		HostIP:    ip,
		HostIPs:   []corev1.HostIP{{IP: ip}},
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		StartTime: &startTime,
		QOSClass:  pod.Status.QOSClass,
	}
	initialized, ready := true, true
	for _, r := range runs {
		cs := corev1.ContainerStatus{
			Name:                 r.name,
			Image:                r.image,
			RestartCount:         r.restarts,
			State:                r.state,
			LastTerminationState: r.lastState,
			Started:              ptrTo(r.state.Running != nil),
			Ready:                r.state.Running != nil,
		}
		if r.pid != 0 {
			cs.ContainerID = fmt.Sprintf("process://%d", r.pid)
		}
		if r.init {
			cs.Ready = r.state.Terminated != nil && r.state.Terminated.ExitCode == 0
			initialized = initialized && cs.Ready
			st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
			continue
		}
		ready = ready && cs.Ready
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse}
		if ok {
			c.Status = corev1.ConditionTrue
		}
		// Keep the transition time of an unchanged condition, as a kubelet does.
		for _, old := range pod.Status.Conditions {
			if old.Type == t && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
		return c
	}
	ready = ready && initialized
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodScheduled, true),
		cond(corev1.PodInitialized, initialized),
		cond(corev1.ContainersReady, ready),
		cond(corev1.PodReady, ready),
	}
	return st
}

// podPhase follows the kubelet's rules: Pending until the init containers have succeeded and a
// container has started; Failed when an init container failed and will not be retried; once
// every container has terminated and none will restart, Succeeded if all exited 0, else Failed;
// Running otherwise.
func podPhase(policy corev1.RestartPolicy, runs []*containerRun) corev1.PodPhase {
	var started, running, succeeded, failed, total int
	for _, r := range runs {
		t := r.state.Terminated
		if r.init {
			if t != nil && t.ExitCode != 0 && policy == corev1.RestartPolicyNever {
				return corev1.PodFailed
			}
			if t == nil || t.ExitCode != 0 {
				return corev1.PodPending
			}
			continue
		}
		total++
		switch {
		case r.state.Running != nil:
			started++
			running++
		case t != nil:
			started++
			if t.ExitCode == 0 {
				succeeded++
			} else {
				failed++
			}
		case r.lastState.Terminated != nil:
			// Waiting to restart after an exit.
			started++
		}
	}
	switch {
	case started == 0:
		return corev1.PodPending
	case running > 0 || started < total:
		return corev1.PodRunning
	case policy == corev1.RestartPolicyAlways || policy == "":
		return corev1.PodRunning
	case policy == corev1.RestartPolicyOnFailure && failed > 0:
		return corev1.PodRunning
	case failed > 0:
		return corev1.PodFailed
	}
	return corev1.PodSucceeded
}

func ptrTo[T any](v T) *T { return &v }
