//go:build integration

package install_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestFailedInstallLeavesTheClusterAsItWas installs the agent chart on an API server with no
// node, so its Deployment never turns ready: a first install is removed again, and a failed
// upgrade returns every object to what the install before left (the Deployment's arguments, the
// inventory) and removes what the upgrade added (a namespace and the Role in it).
func TestFailedInstallLeavesTheClusterAsItWas(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	cfg := env.Hub.RESTConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	const ns, release = "open-cluster-management-agent", "flotilla-agent"
	chart := func(timeout time.Duration, vals map[string]any) install.Chart {
		v := map[string]any{"clusterName": "c1", "bootstrapKubeconfig": "apiVersion: v1\nkind: Config\n"}
		for k, x := range vals {
			v[k] = x
		}
		return install.Chart{Chart: charts.Agent, Release: charts.Release{Name: release, Namespace: ns}, Values: v,
			Deployment: release, Timeout: timeout, RollbackOnFailure: true, Out: &bytes.Buffer{}, Clock: clock.RealClock{}}
	}
	const addOnNS = "open-cluster-management-agent-addon"
	gone := func(what string, err error) {
		t.Helper()
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s after the rollback: %v, want it gone", what, err)
		}
	}
	terminating := func(name string) {
		t.Helper()
		n, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err == nil && n.DeletionTimestamp == nil {
			t.Errorf("namespace %s, which the failed install created, is still there and not being deleted", name)
		}
	}

	// A first install that fails leaves nothing but the CRDs.
	_, err := install.InstallChart(ctx, cfg, chart(2*time.Second, nil))
	if err == nil || !strings.Contains(err.Error(), "is not ready after 2s") || !strings.Contains(err.Error(), "rolled back: nothing of flotilla-agent is left") {
		t.Fatalf("first install on a cluster without nodes: %v, want a failed wait, rolled back", err)
	}
	terminating(ns)
	terminating(addOnNS)
	_, err = cs.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{})
	gone("the Deployment", err)
	_, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, release+"-inventory", metav1.GetOptions{})
	gone("the inventory", err)
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: install.InstanceLabel + "=" + release})
	if err != nil || len(crbs.Items) != 0 {
		t.Errorf("cluster role bindings of the release after the rollback: %d, %v; want none", len(crbs.Items), err)
	}
	// The namespace controller finishes the namespaces' deletion before the next install.
	for _, n := range []string{ns, addOnNS} {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("namespace %s not deleted: %v", n, err)
		}
	}

	// An install that succeeds (not waited for), then an upgrade that fails.
	if _, err := install.InstallChart(ctx, cfg, chart(0, map[string]any{"addOnNamespace": false})); err != nil {
		t.Fatal(err)
	}
	before, err := cs.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inventory, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, release+"-inventory", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = install.InstallChart(ctx, cfg, chart(2*time.Second, map[string]any{"extraArgs": []any{"--no-such-flag"}}))
	if err == nil || !strings.Contains(err.Error(), "rolling back to flotilla-agent") && !strings.Contains(err.Error(), "rolled back to flotilla-agent") {
		t.Fatalf("failed upgrade: %v, want it rolled back to the version before", err)
	}
	after, err := cs.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Spec.Template.Spec.Containers[0].Args, after.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("the agent's arguments after the rollback (-before +after):\n%s", diff)
	}
	inv, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, release+"-inventory", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(inventory.Data, inv.Data); diff != "" {
		t.Errorf("the inventory after the rollback (-before +after):\n%s", diff)
	}
	terminating(addOnNS)
	// The namespace the failed upgrade did not create (the first install's) stays.
	if n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil || n.DeletionTimestamp != nil {
		t.Errorf("namespace %s, which the failed upgrade did not create, after its rollback: %v (deleting: %v)", ns, err, err == nil && n.DeletionTimestamp != nil)
	}
	roles, err := cs.RbacV1().Roles(addOnNS).List(ctx, metav1.ListOptions{LabelSelector: install.InstanceLabel + "=" + release})
	if err != nil || len(roles.Items) != 0 {
		t.Errorf("roles the upgrade added in %s after the rollback: %d, %v; want none", addOnNS, len(roles.Items), err)
	}
}
