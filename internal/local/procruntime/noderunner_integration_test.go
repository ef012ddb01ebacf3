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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestNodeRunnerRunsDeployment: the hub's process-runtime node (testenv.Options.HubRuntime:
// procruntime.NodeRunner in this process) is registered, Ready and untainted, so the real
// kube-scheduler places a Deployment's pod on it by its requests; the pod runs as a process and
// the Deployment turns Available through the real controller manager. The node's Lease is
// renewed every 10 s, as the node lifecycle controller expects of a kubelet.
func TestNodeRunnerRunsDeployment(t *testing.T) {
	env := testenv.Start(t, testenv.Options{HubRuntime: true})
	hub := env.Hub
	ctx := context.Background()
	ns := env.Namespace(t, hub)
	waitFor(t, "kube-root-ca.crt in "+ns, func() (bool, error) {
		_, err := hub.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	})

	labels := map[string]string{"app": "shell"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shell"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: shellImage, Command: []string{"sh", "-c", `echo "started on $NODE"; exec sleep 600`},
					Env: []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
					}},
				}}},
			},
		},
	}
	if _, err := hub.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var state string
	waitFor(t, "deployment shell Available", func() (bool, error) {
		got, err := hub.Client.AppsV1().Deployments(ns).Get(ctx, "shell", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		state = fmt.Sprintf("%+v", got.Status)
		for _, c := range got.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue && got.Status.AvailableReplicas == 1 {
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("deployment status: %s", state)

	pods, err := hub.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods of the deployment: %v, err %v; want one", pods, err)
	}
	pod := pods.Items[0]
	if pod.Spec.NodeName != testenv.RuntimeNode {
		t.Errorf("the scheduler placed the pod on %q, want %q", pod.Spec.NodeName, testenv.RuntimeNode)
	}
	pid := strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "process://")
	if cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline"); err != nil || !strings.HasPrefix(string(cmdline), "sleep\x00600") {
		t.Errorf("the pod's process %s: cmdline %q, err %v; want sleep 600", pid, cmdline, err)
	}
	log, err := os.ReadFile(filepath.Join(hub.Runtime.PodDir(ns, pod.Name), "logs", "main.log"))
	if want := "started on " + testenv.RuntimeNode + "\n"; err != nil || string(log) != want {
		t.Errorf("the pod's log = %q (err %v), want %q", log, err, want)
	}

	node, err := hub.Client.CoreV1().Nodes().Get(ctx, testenv.RuntimeNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !localk8s.NodeSchedulable(node) {
		t.Errorf("node %s is not Ready and untainted: taints %v, conditions %v", node.Name, node.Spec.Taints, node.Status.Conditions)
	}
	lease, err := hub.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, testenv.RuntimeNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *lease.Spec.HolderIdentity != node.Name || len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != node.UID {
		t.Errorf("lease: holder %q, owners %v; want the node as both", *lease.Spec.HolderIdentity, lease.OwnerReferences)
	}
	first := lease.Spec.RenewTime.Time
	deadline := time.Now().Add(15 * time.Second)
	for {
		l, err := hub.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, testenv.RuntimeNode, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := l.Spec.RenewTime.Sub(first); d > 0 {
			if d < 9*time.Second || d > 11*time.Second {
				t.Errorf("the lease was renewed %s after the previous renewal, want about 10 s", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease was not renewed within 15 s of %s", first)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
