//go:build integration

package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestRestrictedWorkMode installs the agent chart with work.mode Restricted and runs the agent
// as its Deployment says, with the chart's ServiceAccounts only. A work that reads the agent's
// hub credentials (hub-kubeconfig-secret) with a ReadOnly manifest and status feedback, and one
// that plants a ClusterClaim, are refused by the spoke's RBAC: works without an executor run as
// flotilla-work, which has neither, and the agent's own identity applies nothing. A work in a
// namespace the values list applies. And whatever the mode, the agent's own identity reads no
// Secret outside the namespaces where it keeps credentials.
func TestRestrictedWorkMode(t *testing.T) {
	const tenant = "lp-tenant"
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	ctx := context.Background()
	ensureNamespace(t, env.Spokes[0], tenant)
	// What an earlier test of the package applied in OCM's mode (helm upgrade would delete it).
	err := env.Spokes[0].Client.RbacV1().ClusterRoleBindings().Delete(ctx, "flotilla-agent-work-execution", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	f := installFleetWith(t, nil, map[string]any{"work": map[string]any{"mode": "Restricted", "restricted": map[string]any{"namespaces": []any{tenant}}}})
	admin, spoke := f.admin, f.spoke

	steal := manifestWork(t, clusterName, "lp-steal", &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: agentNamespace, Name: "hub-kubeconfig-secret"},
	})
	steal.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "secrets", Namespace: agentNamespace, Name: "hub-kubeconfig-secret"},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly},
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "kubeconfig", Path: ".data.kubeconfig"}}}},
	}}
	plant := manifestWork(t, clusterName, "lp-plant", &clusterv1alpha1.ClusterClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.open-cluster-management.io/v1alpha1", Kind: "ClusterClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "federated-learning-sample.client-data"},
		Spec:       clusterv1alpha1.ClusterClaimSpec{Value: "/data/planted"},
	})
	outside := manifestWork(t, clusterName, "lp-outside", &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lp-outside"},
	})
	allowedWork := manifestWork(t, clusterName, "lp-tenant-work", &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "hello"}, Data: map[string]string{"k": "v"},
	})
	for _, w := range []*workv1.ManifestWork{steal, plant, outside, allowedWork} {
		testenv.Create(t, admin, w)
	}

	// manifestApplied waits for the work's one manifest to report Applied, and returns it.
	manifestApplied := func(name string) workv1.ManifestCondition {
		var got workv1.ManifestCondition
		testenv.WaitFor(t, 60*time.Second, "ManifestWork "+name+"'s manifest to report Applied", func(ctx context.Context) (bool, string, error) {
			w := &workv1.ManifestWork{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: name}, w); err != nil {
				return false, "", err
			}
			if len(w.Status.ResourceStatus.Manifests) != 1 {
				return false, fmt.Sprintf("status %+v", w.Status), nil
			}
			got = w.Status.ResourceStatus.Manifests[0]
			return meta.FindStatusCondition(got.Conditions, workv1.ManifestApplied) != nil, fmt.Sprintf("%+v", got), nil
		})
		return got
	}
	refused := func(name, what string) {
		t.Helper()
		m := manifestApplied(name)
		c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied)
		if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "forbidden") ||
			!strings.Contains(c.Message, "system:serviceaccount:"+agentNamespace+":flotilla-work") {
			t.Errorf("%s: Applied %s %q, want False, forbidden to flotilla-work", what, c.Status, c.Message)
		}
		if len(m.StatusFeedbacks.Values) > 0 {
			t.Errorf("%s: status feedback %+v, want none", what, m.StatusFeedbacks.Values)
		}
	}
	refused("lp-steal", "reading the agent's hub credentials with a ReadOnly manifest")
	refused("lp-plant", "planting a ClusterClaim")
	refused("lp-outside", "a ConfigMap in a namespace the values do not list")
	if _, err := spoke.Client.CoreV1().ConfigMaps("default").Get(ctx, "lp-outside", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap outside the listed namespaces: %v, want NotFound", err)
	}
	spokeAdmin, err := client.New(spoke.RESTConfig(), client.Options{Scheme: admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := spokeAdmin.Get(ctx, client.ObjectKey{Name: "federated-learning-sample.client-data"}, &clusterv1alpha1.ClusterClaim{}); !apierrors.IsNotFound(err) {
		t.Errorf("the planted ClusterClaim on the spoke: %v, want NotFound", err)
	}
	if c := meta.FindStatusCondition(manifestApplied("lp-tenant-work").Conditions, workv1.ManifestApplied); c.Status != metav1.ConditionTrue {
		t.Errorf("a ConfigMap in %s: Applied %s %q, want True", tenant, c.Status, c.Message)
	}

	// Removal runs as flotilla-work too: deleting the work takes its ConfigMap off the spoke, and
	// the agent lets the work go.
	if err := admin.Delete(ctx, allowedWork); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "the tenant work and its ConfigMap to be gone", func(ctx context.Context) (bool, string, error) {
		_, cmErr := spoke.Client.CoreV1().ConfigMaps(tenant).Get(ctx, "hello", metav1.GetOptions{})
		wErr := admin.Get(ctx, client.ObjectKeyFromObject(allowedWork), &workv1.ManifestWork{})
		return apierrors.IsNotFound(cmErr) && apierrors.IsNotFound(wErr), fmt.Sprintf("ConfigMap: %v; work: %v", cmErr, wErr), nil
	})

	work := "system:serviceaccount:" + agentNamespace + ":flotilla-work"
	workGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + agentNamespace, "system:authenticated"}
	for _, a := range []access{
		{verb: "get", resource: "secrets", namespace: agentNamespace, name: "hub-kubeconfig-secret"},
		{verb: "get", resource: "secrets", namespace: tenant},
		{verb: "list", resource: "secrets"},
		{verb: "create", resource: "pods", namespace: agentNamespace},
		{verb: "create", resource: "pods", namespace: "open-cluster-management-agent-addon"},
		{verb: "create", group: "cluster.open-cluster-management.io", resource: "clusterclaims"},
		{verb: "update", group: "cluster.open-cluster-management.io", resource: "clusterclaims", name: "id.k8s.io"},
		{verb: "impersonate", resource: "serviceaccounts", namespace: agentNamespace, name: "flotilla-agent"},
		{verb: "impersonate", resource: "users"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: tenant},
		{verb: "create", resource: "serviceaccounts/token", namespace: tenant},
	} {
		if allowed(t, spoke.Client, work, workGroups, a) {
			t.Errorf("flotilla-work may %s %s %s in %q: the Restricted mode grants too much", a.verb, a.resource, a.name, a.namespace)
		}
	}
	agent := "system:serviceaccount:" + agentNamespace + ":flotilla-agent"
	agentGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + agentNamespace, "system:authenticated"}
	for _, a := range []access{
		{verb: "list", resource: "secrets"},
		{verb: "get", resource: "secrets", namespace: "kube-system"},
		{verb: "get", resource: "secrets", namespace: tenant},
		{verb: "create", resource: "configmaps", namespace: tenant},
	} {
		if allowed(t, spoke.Client, agent, agentGroups, a) {
			t.Errorf("the agent's ServiceAccount may %s %s in %q: it should keep to its own namespaces", a.verb, a.resource, a.namespace)
		}
	}
	for _, ns := range []string{agentNamespace, "open-cluster-management-agent-addon"} {
		if !allowedSoon(t, spoke.Client, agent, agentGroups, access{verb: "get", resource: "secrets", namespace: ns}) {
			t.Errorf("the agent may not read Secrets in %s, where it keeps credentials", ns)
		}
	}
}
