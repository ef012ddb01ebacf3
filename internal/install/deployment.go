package install

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// WaitDeployment waits until Deployment ns/name has all its replicas updated and available,
// printing to out a line whenever its state changes, and returns an error that says what is
// wrong (pods not scheduled, an image that cannot be pulled or was not loaded, a crashing
// container) when timeout passes first.
func WaitDeployment(ctx context.Context, cs kubernetes.Interface, ns, name string, timeout time.Duration, out io.Writer, clk clock.Clock) error {
	if clk == nil {
		clk = clock.RealClock{}
	}
	deadline := clk.Now().Add(timeout)
	// crash is the last crash output read: a container's previous log can be gone by the time
	// the wait ends (the kubelet removes dead containers of a crash loop), so it is read whenever
	// the state changes, which a restart does.
	last, crash := "", ""
	for {
		state, pods, done, err := deploymentState(ctx, cs, ns, name)
		if err != nil {
			return err
		}
		timedOut := !done && !clk.Now().Before(deadline)
		if state != last || timedOut {
			if out != nil && state != last {
				_, _ = fmt.Fprintf(out, "  deployment %s/%s: %s\n", ns, name, state)
			}
			last = state
			if c := crashOutput(ctx, cs, pods); c != "" {
				crash = c
			}
		}
		if done {
			return nil
		}
		if timedOut {
			return fmt.Errorf("deployment %s/%s is not ready after %s: %s%s", ns, name, timeout, state, crash)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(time.Second):
		}
	}
}

// deploymentState describes the Deployment and its pods in one line, and returns the pods it
// read (none once the Deployment is ready).
func deploymentState(ctx context.Context, cs kubernetes.Interface, ns, name string) (string, []corev1.Pod, bool, error) {
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "not found", nil, false, nil
	}
	if err != nil {
		return "", nil, false, err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	done := d.Generation <= s.ObservedGeneration && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
	state := fmt.Sprintf("%d/%d ready", s.AvailableReplicas, want)
	if s.UpdatedReplicas < want {
		state += fmt.Sprintf(", %d/%d updated", s.UpdatedReplicas, want)
	}
	if done {
		return state, nil, true, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return "", nil, false, err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", nil, false, err
	}
	if len(pods.Items) == 0 {
		return state + "; no pods yet" + replicaFailure(d), nil, false, nil
	}
	var why []string
	for i := range pods.Items {
		if w := podProblem(&pods.Items[i]); w != "" {
			why = append(why, w)
		}
	}
	sort.Strings(why)
	if len(why) > 0 {
		state += "; " + strings.Join(why, "; ")
	}
	return state, pods.Items, false, nil
}

// crashOutputLines is how many of a crashed container's last lines a failed wait shows.
const crashOutputLines = 10

// crashOutput is the end of the previous run's output of each container of pods (the
// Deployment's, as deploymentState read them) that keeps crashing (CrashLoopBackOff) or last
// ended in an error, for the message of a failed wait: the reason a user needs is usually there.
// Empty when there is none or it cannot be read.
func crashOutput(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			crashing := c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff"
			failed := c.LastTerminationState.Terminated != nil && c.LastTerminationState.Terminated.ExitCode != 0
			if !crashing && !failed {
				continue
			}
			raw, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{
				Container: c.Name, Previous: true, TailLines: ptr.To(int64(crashOutputLines)),
			}).DoRaw(ctx)
			if err != nil || !usableLog(string(raw)) {
				continue
			}
			how := ""
			if t := c.LastTerminationState.Terminated; t != nil {
				how = fmt.Sprintf(" (exit code %d)", t.ExitCode)
			}
			fmt.Fprintf(&b, "\nlast lines of pod %s, container %s, before it ended%s:\n", p.Name, c.Name, how)
			for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
				b.WriteString("  " + l + "\n")
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// usableLog tells a container's output from nothing, or from the kubelet's answer when that
// output is already gone (it sends its error in the log stream).
func usableLog(raw string) bool {
	raw = strings.TrimSpace(raw)
	return raw != "" && !strings.HasPrefix(raw, "failed to try resolving symlinks in path")
}

func replicaFailure(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return " (" + c.Message + ")"
		}
	}
	return ""
}

// podProblem says why a pod is not ready, with the fix where one is known; "" when it is.
func podProblem(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			hint := ""
			if strings.Contains(c.Message, corev1.TaintNodeNotReady) || strings.Contains(c.Message, corev1.TaintNodeUnreachable) {
				hint = " (a node is not Ready: see kubectl get nodes and the node's kubelet)"
			}
			return fmt.Sprintf("pod %s not scheduled: %s%s", p.Name, c.Message, hint)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull":
				return fmt.Sprintf("pod %s: image %s is not on the node and imagePullPolicy is Never: load the image tarball first (kind load image-archive, ctr -n k8s.io images import; docs/install.md)", p.Name, cs.Image)
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
				return fmt.Sprintf("pod %s: image %s cannot be pulled (%s: %s): push it to a registry the nodes reach, or load the tarball and use --image-pull-policy Never", p.Name, cs.Image, w.Reason, w.Message)
			case "CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError":
				return fmt.Sprintf("pod %s: container %s %s: %s (kubectl -n %s logs %s)", p.Name, cs.Name, w.Reason, w.Message, p.Namespace, p.Name)
			case "":
			default:
				return fmt.Sprintf("pod %s: container %s waiting: %s", p.Name, cs.Name, w.Reason)
			}
		}
		if !cs.Ready && cs.State.Running != nil {
			return fmt.Sprintf("pod %s: container %s running, not ready yet", p.Name, cs.Name)
		}
	}
	if p.Status.Phase == corev1.PodPending {
		return fmt.Sprintf("pod %s pending", p.Name)
	}
	return ""
}
