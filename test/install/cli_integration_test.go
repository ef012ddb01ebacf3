//go:build integration

package install

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/cli"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// flotilla runs the CLI in process; it returns stdout and the error.
func flotilla(t *testing.T, args ...string) (string, error) {
	t.Helper()
	io, out, _ := streams.Buffers()
	root := cli.NewRootCommand(io, clocktesting.NewFakeClock(time.Now()))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func deploymentExists(t *testing.T, c *testenv.Cluster, ns, name string) bool {
	t.Helper()
	_, err := c.Client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestInitInstall covers the install mode's refusals (nothing is installed), its wait that says
// why the hub is not ready, and uninstall removing only what it installed.
func TestInitInstall(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 0})
	hub := env.Hub
	ctx := context.Background()
	kc := hub.Kubeconfig
	bootstrap := t.TempDir() + "/bootstrap.kubeconfig"

	_, err := flotilla(t, "init", "--install", "--kubeconfig", kc, "--bootstrap-kubeconfig", bootstrap, "--set", "replicas=-1")
	if err == nil || !strings.Contains(err.Error(), "replicas") || !strings.Contains(err.Error(), "nothing was installed") {
		t.Errorf("negative replicas: err = %v, want one naming replicas and saying nothing was installed", err)
	}
	_, err = flotilla(t, "init", "--install", "--kubeconfig", kc, "--bootstrap-kubeconfig", bootstrap, "--set", "ports.webhook=8080")
	if err == nil || !strings.Contains(err.Error(), "ports.metrics and ports.webhook are both 8080") {
		t.Errorf("port clash: err = %v", err)
	}
	if deploymentExists(t, hub, "open-cluster-management-hub", "flotilla-hub") {
		t.Fatal("a refused install left the hub's Deployment behind")
	}

	// OCM's hub is there: refused before anything changes.
	ocmNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management"}}
	if _, err := hub.Client.CoreV1().Namespaces().Create(ctx, ocmNS, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ocm := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management", Name: "cluster-manager"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cluster-manager"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "cluster-manager"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "quay.io/open-cluster-management/registration-operator"}}},
			},
		},
	}
	if _, err := hub.Client.AppsV1().Deployments("open-cluster-management").Create(ctx, ocm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = flotilla(t, "init", "--install", "--kubeconfig", kc, "--bootstrap-kubeconfig", bootstrap)
	if err == nil || !strings.Contains(err.Error(), "OCM's hub runs here (Deployment open-cluster-management/cluster-manager)") {
		t.Errorf("over OCM's hub: err = %v", err)
	}
	if deploymentExists(t, hub, "open-cluster-management-hub", "flotilla-hub") {
		t.Fatal("an install refused for OCM's hub left the hub's Deployment behind")
	}
	if err := hub.Client.AppsV1().Deployments("open-cluster-management").Delete(ctx, "cluster-manager", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The local hub has no nodes: the install applies everything, says why it is not ready and
	// removes what it installed (the CRDs stay, as Helm keeps them).
	_, err = flotilla(t, "init", "--install", "--kubeconfig", kc, "--bootstrap-kubeconfig", bootstrap, "--wait", "3s")
	if err == nil || !strings.Contains(err.Error(), "deployment open-cluster-management-hub/flotilla-hub is not ready after 3s: 0/2 ready") ||
		!strings.Contains(err.Error(), "rolled back: nothing of flotilla-hub is left but its CRDs") {
		t.Errorf("hub without nodes: err = %v, want the Deployment's state and the rollback", err)
	}
	if deploymentExists(t, hub, "open-cluster-management-hub", "flotilla-hub") {
		t.Fatal("a failed first install left the hub's Deployment behind")
	}
	if _, err := hub.Client.RbacV1().ClusterRoles().Get(ctx, "flotilla-hub", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a failed first install left ClusterRole flotilla-hub behind (err %v)", err)
	}
	// The namespace the failed install created goes too (the namespace controller finishes it).
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := hub.Client.CoreV1().Namespaces().Get(ctx, "open-cluster-management-hub", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("namespace open-cluster-management-hub, which the failed install created, is still there: %v", err)
	}
	// --rollback-on-failure=false keeps a failed install for inspection.
	_, err = flotilla(t, "init", "--install", "--kubeconfig", kc, "--bootstrap-kubeconfig", bootstrap, "--wait", "3s", "--rollback-on-failure=false")
	if err == nil || strings.Contains(err.Error(), "rolled back") {
		t.Errorf("hub without nodes, --rollback-on-failure=false: err = %v, want a failure without a rollback", err)
	}
	if !deploymentExists(t, hub, "open-cluster-management-hub", "flotilla-hub") {
		t.Fatal("the install did not create the hub's Deployment")
	}
	// A ServiceAccount of someone else's in the namespace is not the chart's and stays.
	mine := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management-hub", Name: "someone-elses"}}
	if _, err := hub.Client.CoreV1().ServiceAccounts("open-cluster-management-hub").Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Nor is a bootstrap ServiceAccount someone else made under the name `flotilla init` uses.
	bootstrapSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management", Name: "cluster-bootstrap"}}
	if _, err := hub.Client.CoreV1().ServiceAccounts("open-cluster-management").Create(ctx, bootstrapSA, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	out, err := flotilla(t, "uninstall", "hub", "--kubeconfig", kc)
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if deploymentExists(t, hub, "open-cluster-management-hub", "flotilla-hub") {
		t.Errorf("uninstall left the hub's Deployment:\n%s", out)
	}
	for _, get := range []func() error{
		func() error {
			_, err := hub.Client.RbacV1().ClusterRoles().Get(ctx, "flotilla-hub", metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := hub.Client.CoreV1().Secrets("open-cluster-management-hub").Get(ctx, "flotilla-hub-webhook-tls", metav1.GetOptions{})
			return err
		},
	} {
		if err := get(); !apierrors.IsNotFound(err) {
			t.Errorf("uninstall left an object of the chart (err %v):\n%s", err, out)
		}
	}
	if _, err := hub.Client.CoreV1().ServiceAccounts("open-cluster-management-hub").Get(ctx, "someone-elses", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall removed a ServiceAccount Flotilla did not install: %v", err)
	}
	if got, err := hub.Client.CoreV1().ServiceAccounts("open-cluster-management").Get(ctx, "cluster-bootstrap", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall removed a bootstrap ServiceAccount Flotilla did not label: %v", err)
	} else if got.Labels["app.kubernetes.io/part-of"] == "flotilla" {
		t.Errorf("the unlabeled bootstrap ServiceAccount was taken over: labels %v", got.Labels)
	}
	if _, err := hub.Client.Discovery().ServerResourcesForGroupVersion("cluster.open-cluster-management.io/v1"); err != nil {
		t.Errorf("uninstall removed the CRDs: %v", err)
	}
}

// TestJoinInstallRefusesAHubWithoutCRDs: a kubeconfig for a cluster that serves no OCM APIs is
// refused with the fix, and nothing is installed on the spoke.
func TestJoinInstallRefusesAHubWithoutCRDs(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	spoke := env.Spokes[0]
	// The spoke's own admin kubeconfig stands for a "hub" without Flotilla's CRDs.
	_, err := flotilla(t, "join", "--install", "--cluster-name", "nocrd", "--bootstrap-kubeconfig", spoke.Kubeconfig,
		"--kubeconfig", spoke.Kubeconfig, "--namespace", "flotilla-nocrd-test")
	if err == nil || !strings.Contains(err.Error(), "does not serve ManagedClusters") || !strings.Contains(err.Error(), "flotilla init --install") {
		t.Fatalf("join against a cluster without the CRDs: err = %v", err)
	}
	if _, err := spoke.Client.CoreV1().Namespaces().Get(context.Background(), "flotilla-nocrd-test", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused join made the namespace (err %v)", err)
	}
}
