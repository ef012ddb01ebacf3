//go:build integration

package procruntime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/procruntime"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestPodRunner: pods bound to a node labeled for the process runtime run as processes with
// their pod's identity (the API server's own kube-api-access volume, a token bound to the pod),
// and their status follows: Running with the container started, then Failed with the exit code;
// a deleted pod's process stops and the deletion is confirmed; a pod on another node is left
// alone.
func TestPodRunner(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	hub := env.Hub
	ctx, cancel := context.WithCancel(context.Background())
	ns := env.Namespace(t, hub)
	create(t, hub, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "worker"}})
	node := "proc-" + ns[len(ns)-5:]
	create(t, hub, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{procruntime.NodeLabel: "true", corev1.LabelHostname: node}}})
	other := "plain-" + ns[len(ns)-5:]
	create(t, hub, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: other}})
	t.Cleanup(func() {
		for _, n := range []string{node, other} {
			_ = hub.Client.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	// The API server's admission mounts kube-root-ca.crt, which the controller manager publishes
	// in each namespace shortly after it is created.
	waitFor(t, "kube-root-ca.crt in "+ns, func() (bool, error) {
		_, err := hub.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	})

	runner := &procruntime.PodRunner{
		Runtime: &procruntime.Runtime{
			Root:     t.TempDir(),
			Commands: map[string]string{procruntime.Repository(shellImage): "/bin/sh"},
			Client:   hub.Client,
			Server:   hub.RESTConfig(),
			Clock:    clock.RealClock{},
		},
		// This node's pods only: the fleet's own runtime node has a runner of its own.
		Nodes:   labels.SelectorFromSet(labels.Set{procruntime.NodeLabel: "true", corev1.LabelHostname: node}),
		Backoff: 200 * time.Millisecond,
	}
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	kubectl := env.Binaries.Path(localk8s.KubectlBin)
	pod := func(name, nodeName string, policy corev1.RestartPolicy, script string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{
				NodeName:           nodeName,
				ServiceAccountName: "worker",
				RestartPolicy:      policy,
				Containers: []corev1.Container{{
					Name: "main", Image: shellImage, Command: []string{"sh", "-c", script},
					Env: []corev1.EnvVar{{Name: "KUBECTL", Value: kubectl}},
				}},
			},
		}
	}
	// The job waits for a file so that the test sees it Running before it exits.
	gate := filepath.Join(t.TempDir(), "gate")
	create(t, hub, pod("job", node, corev1.RestartPolicyNever, fmt.Sprintf(
		`"$KUBECTL" auth whoami -o jsonpath='{.status.userInfo.username}{"\n"}{.status.userInfo.extra.authentication\.kubernetes\.io/pod-name}{"\n"}'; while [ ! -e %s ]; do sleep 0.1; done; exit 4`, gate)))
	create(t, hub, pod("server", node, corev1.RestartPolicyAlways, `echo serving; exec sleep 600`))
	create(t, hub, pod("elsewhere", other, corev1.RestartPolicyAlways, `exit 0`))

	running := waitPod(t, hub, ns, "job", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	cs := running.Status.ContainerStatuses[0]
	if !*cs.Started || !cs.Ready || !strings.HasPrefix(cs.ContainerID, "process://") || running.Status.PodIP != "127.0.0.1" {
		t.Errorf("running job's status: started %v, ready %v, containerID %q, podIP %q", *cs.Started, cs.Ready, cs.ContainerID, running.Status.PodIP)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	failed := waitPod(t, hub, ns, "job", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := failed.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 4 || term.Reason != "Error" {
		t.Errorf("failed job's container state = %+v, want terminated with exit code 4", failed.Status.ContainerStatuses[0].State)
	}
	log, err := os.ReadFile(filepath.Join(runner.Runtime.PodDir(ns, "job"), "logs", "main.log"))
	if err != nil {
		t.Fatal(err)
	}
	// The token is the one the API server's admission asked for: bound to the pod.
	if want := "system:serviceaccount:" + ns + ":worker\n[\"job\"]\n"; string(log) != want {
		t.Errorf("the job's output = %q, want %q", log, want)
	}

	server := waitPod(t, hub, ns, "server", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if err := hub.Client.CoreV1().Pods(ns).Delete(ctx, "server", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod server to be gone", func() (bool, error) {
		_, err := hub.Client.CoreV1().Pods(ns).Get(ctx, "server", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	pid := strings.TrimPrefix(server.Status.ContainerStatuses[0].ContainerID, "process://")
	if _, err := os.Stat("/proc/" + pid); err == nil {
		t.Errorf("the deleted pod's process %s still runs", pid)
	}

	untouched, err := hub.Client.CoreV1().Pods(ns).Get(ctx, "elsewhere", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if untouched.Status.Phase != corev1.PodPending || len(untouched.Status.ContainerStatuses) != 0 {
		t.Errorf("the pod on an unlabeled node has status %s with %d container statuses; want Pending and none", untouched.Status.Phase, len(untouched.Status.ContainerStatuses))
	}
}

func waitPod(t *testing.T, c *testenv.Cluster, ns, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	waitFor(t, "pod "+name, func() (bool, error) {
		p, err := c.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return ok(p), nil
	})
	return last
}

func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
