//go:build integration

package work

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

var (
	saGVR          = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	clusterRoleGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	nsGVR          = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// cleanupWorkload is what MultiKueue's work puts on a worker, in small: a namespace, a
// ServiceAccount in it and a ClusterRole.
func cleanupWorkload(t *testing.T, cluster string) *workv1.ManifestWork {
	t.Helper()
	return newWork(cluster, "cleanup", manifests(t,
		namespace("cleanup-app"),
		obj{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": obj{"name": "worker", "namespace": "cleanup-app"}},
		obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": obj{"name": "flotilla-cleanup-test"},
			"rules": []any{obj{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}}},
	))
}

// applyCleanupWorkload applies the workload and an add-on on the cluster and waits until the
// spoke has it.
func applyCleanupWorkload(t *testing.T, hub client.Client, j *joined) {
	t.Helper()
	createWork(t, hub, cleanupWorkload(t, j.Name))
	waitWork(t, hub, j.Name, "cleanup", "every manifest applied", allApplied)
	testenv.Create(t, hub, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: j.Name, Name: "cleanup-test"}})
}

// waitSpokeCleaned waits until what the workload applied is gone from the spoke.
func waitSpokeCleaned(t *testing.T, j *joined) {
	t.Helper()
	waitGone(t, j, saGVR, "cleanup-app", "worker")
	waitGone(t, j, clusterRoleGVR, "", "flotilla-cleanup-test")
	waitGone(t, j, nsGVR, "", "cleanup-app")
}

// waitHubNamespaceGone waits until the cluster's namespace is gone from the hub.
func waitHubNamespaceGone(t *testing.T, hub client.Client, cluster string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "namespace "+cluster+" to be gone from the hub", func(ctx context.Context) (bool, string, error) {
		ns := &corev1.Namespace{}
		err := hub.Get(ctx, client.ObjectKey{Name: cluster}, ns)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		works := &workv1.ManifestWorkList{}
		_ = hub.List(ctx, works, client.InNamespace(cluster))
		var left []string
		for _, w := range works.Items {
			left = append(left, fmt.Sprintf("%s%v", w.Name, w.Finalizers))
		}
		return false, fmt.Sprintf("phase %s, works %v", ns.Status.Phase, left), client.IgnoreNotFound(err)
	})
}

// waitAgentAccess waits until the agent's current credentials can list works in its namespace.
func waitAgentAccess(t *testing.T, a *agentreg.Agent, cluster string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, cluster+"'s agent to read its namespace on the hub again", func(ctx context.Context) (bool, string, error) {
		c := a.Hub().Current()
		if c == nil {
			return false, "no credentials", nil
		}
		if err := c.Client.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster)); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// deny sets the cluster's spec.hubAcceptsClient to false, as an administrator denying it.
func deny(t *testing.T, hub client.Client, cluster string) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.HubAcceptsClient = false
	if err := hub.Patch(ctx, mc, patch); err != nil {
		t.Fatal(err)
	}
}

// The issue this guards against: the hub took the agent's access away before its works were
// gone, so the agent could not remove what they applied, the works' finalizer kept the namespace
// Terminating for ever, and the cluster's name could not be used again.
func TestDeniedOrDeletedClusterIsCleanedUp(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	clusters := joinAll(t, env)
	hub := env.HubClient(t)
	ctx := context.Background()
	for _, j := range clusters {
		applyCleanupWorkload(t, hub, j)
	}

	t.Run("denied: the agent removes what the works applied, then the namespace goes and the cluster can be accepted again", func(t *testing.T) {
		j := clusters[0]
		deny(t, hub, j.Name)
		waitSpokeCleaned(t, j)
		mc := &clusterv1.ManagedCluster{}
		waitHubNamespaceGone(t, hub, j.Name)
		if err := hub.Get(ctx, client.ObjectKey{Name: j.Name}, mc); err != nil {
			t.Fatal(err)
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
		if c == nil || c.Reason != hubreg.ReasonDenied || strings.Contains(c.Message, "removed their finalizer") {
			t.Errorf("HubAcceptedManagedCluster = %+v, want reason %s and nothing forced", c, hubreg.ReasonDenied)
		}

		if _, err := hubreg.Accept(ctx, hub, env.Hub.Client, j.Name, hubreg.AcceptOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAgentAccess(t, j.Reg, j.Name)
		applyCleanupWorkload(t, hub, j)
		deleteWork(t, hub, j.Name, "cleanup")
		waitSpokeCleaned(t, j)
		if err := hub.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: j.Name, Name: "cleanup-test"}}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("deleted: the agent removes what the works applied, then the cluster goes and its name registers again", func(t *testing.T) {
		j := clusters[1]
		if err := hub.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: j.Name}}); err != nil {
			t.Fatal(err)
		}
		waitSpokeCleaned(t, j)
		waitHubNamespaceGone(t, hub, j.Name)
		testenv.WaitFor(t, 30*time.Second, "ManagedCluster "+j.Name+" to be gone", func(ctx context.Context) (bool, string, error) {
			mc := &clusterv1.ManagedCluster{}
			err := hub.Get(ctx, client.ObjectKey{Name: j.Name}, mc)
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			return false, fmt.Sprintf("finalizers %v", mc.Finalizers), err
		})

		// Register again as a new agent does: no stored credentials, the bootstrap identity.
		j.stopWork()
		err := j.Spoke.Client.CoreV1().Secrets(agentreg.DefaultNamespace).Delete(ctx, agentreg.DefaultSecretName, metav1.DeleteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := hubreg.BootstrapKubeconfig(ctx, env.Hub.Client, env.Hub.RESTConfig(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		bootstrap, err := clientcmd.RESTConfigFromKubeConfig(data)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agentreg.New(agentreg.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Bootstrap: bootstrap, Spoke: j.Spoke.RESTConfig(),
			Poll: 200 * time.Millisecond, Log: testr.New(t).WithName(j.Name + "-again"),
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, a.Run)
		testenv.WaitFor(t, 60*time.Second, "ManagedCluster "+j.Name+" and a new certificate request", func(ctx context.Context) (bool, string, error) {
			l, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().List(ctx,
				metav1.ListOptions{LabelSelector: clusteridentity.ClusterNameLabel + "=" + j.Name})
			if err != nil {
				return false, "", err
			}
			pending := 0
			for _, r := range l.Items {
				if len(r.Status.Conditions) == 0 {
					pending++
				}
			}
			err = hub.Get(ctx, client.ObjectKey{Name: j.Name}, &clusterv1.ManagedCluster{})
			return err == nil && pending > 0, fmt.Sprintf("get: %v, %d pending requests", err, pending), client.IgnoreNotFound(err)
		})
		if _, err := hubreg.Accept(ctx, hub, env.Hub.Client, j.Name, hubreg.AcceptOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAgentAccess(t, a, j.Name)
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: j.Name}, mc); err != nil {
			t.Fatal(err)
		}
		if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
			t.Errorf("the registered-again cluster's conditions %+v: want HubAcceptedManagedCluster True", mc.Status.Conditions)
		}
		// Later tests use the new registration.
		j.Reg = a
		j.startWork(t, 2*time.Second)
		createWork(t, hub, cleanupWorkload(t, j.Name))
		waitWork(t, hub, j.Name, "cleanup", "every manifest applied", allApplied)
		deleteWork(t, hub, j.Name, "cleanup")
		waitSpokeCleaned(t, j)
	})
}
