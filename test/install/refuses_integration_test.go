//go:build integration

package install

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// as is cfg impersonating the ServiceAccount ns/name with the groups the API server gives it.
func as(cfg *rest.Config, ns, name string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	return c
}

type access struct {
	verb, group, resource, namespace, name string
}

func allowed(t *testing.T, cs kubernetes.Interface, user string, groups []string, a access) bool {
	t.Helper()
	r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.verb, Group: a.group, Resource: a.resource, Namespace: a.namespace, Name: a.name,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

// allowedSoon is allowed, asked again for up to 30 s while it is not: the API server's authorizer
// reads RBAC from its own informer, so a binding just applied takes effect a moment later. Asked
// before the refusals of the same identity, it also makes them mean something: by then the
// authorizer has the chart's bindings.
func allowedSoon(t *testing.T, cs kubernetes.Interface, user string, groups []string, a access) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !allowed(t, cs, user, groups, a) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}

// TestChartIdentitiesRefuse proves what the charts' identities may not do: the hub's reads no
// Secret outside Kueue's namespace, escalates nothing and binds nothing; the agent's cannot
// escalate, impersonate users or change CRDs, and without work.executionClusterRole applies no
// workload of its own accord.
func TestChartIdentitiesRefuse(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	hub, spoke := env.Hub, env.Spokes[0]
	ctx := context.Background()

	// With the Kueue dispatcher on and the Secret path, the chart grants a Role in Kueue's namespace, which Kueue's
	// install makes.
	if _, err := hub.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hubChart := renderChart(t, charts.Hub, hubNamespace, map[string]any{"kueue": map[string]any{"dispatcher": true, "credentials": "secret"}})
	applyChart(t, hub, hubNamespace, hubChart)
	agentChart := renderChart(t, charts.Agent, agentNamespace, map[string]any{
		"clusterName": clusterName, "bootstrapKubeconfig": "apiVersion: v1\nkind: Config\n", "work": map[string]any{"executionClusterRole": ""},
	})
	applyChart(t, spoke, agentNamespace, agentChart)
	// Applying leaves what an earlier install of other values made (helm upgrade would delete it).
	err := spoke.Client.RbacV1().ClusterRoleBindings().Delete(ctx, "flotilla-agent-work-execution", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}

	hubUser := "system:serviceaccount:" + hubNamespace + ":flotilla-hub"
	hubGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + hubNamespace, "system:authenticated"}
	if !allowedSoon(t, hub.Client, hubUser, hubGroups, access{verb: "get", resource: "secrets", namespace: "kueue-system"}) {
		t.Errorf("the hub's ServiceAccount may not read Kueue's Secrets with kueue.dispatcher on")
	}
	for _, a := range []access{
		{verb: "get", resource: "secrets", namespace: "kube-system"},
		{verb: "list", resource: "secrets", namespace: "default"},
		{verb: "get", resource: "secrets", namespace: hubNamespace},
		{verb: "list", resource: "secrets"},
		{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "cluster-admin"},
		{verb: "impersonate", resource: "users"},
		// The add-on manager identity, and only in the hub's namespace (no other account).
		{verb: "impersonate", resource: "serviceaccounts", namespace: hubNamespace, name: "default"},
		{verb: "impersonate", resource: "serviceaccounts", namespace: "kube-system", name: "addon-manager-controller-sa"},
		{verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions"},
		{verb: "delete", resource: "nodes"},
	} {
		if allowed(t, hub.Client, hubUser, hubGroups, a) {
			t.Errorf("the hub's ServiceAccount may %s %s %s in %q: the chart grants too much", a.verb, a.resource, a.name, a.namespace)
		}
	}

	// The API server's own escalation check holds: binding cluster-admin fails as the hub.
	var hubAs *kubernetes.Clientset
	hubAs, err = kubernetes.NewForConfig(as(hub.RESTConfig(), hubNamespace, "flotilla-hub"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = hubAs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "lp-escalate"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: hubNamespace, Name: "flotilla-hub"}},
	}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the hub's ServiceAccount bound cluster-admin to itself: err = %v, want Forbidden", err)
	}

	agentUser := "system:serviceaccount:" + agentNamespace + ":flotilla-agent"
	agentGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + agentNamespace, "system:authenticated"}
	// What a work names as its executor is all it may then do.
	if !allowedSoon(t, spoke.Client, agentUser, agentGroups, access{verb: "impersonate", resource: "serviceaccounts", namespace: "default", name: "deployer"}) {
		t.Errorf("the agent may not impersonate a work's executor ServiceAccount")
	}
	for _, a := range []access{
		{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "cluster-admin"},
		{verb: "impersonate", resource: "users"},
		{verb: "impersonate", resource: "groups"},
		{verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions"},
		// The governance add-ons' CRD comes with the chart: the agent may not change it.
		{verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "configurationpolicies.policy.open-cluster-management.io"},
		{verb: "delete", resource: "nodes"},
		{verb: "create", group: "apps", resource: "deployments", namespace: "default"},
		{verb: "create", resource: "pods", namespace: "default"},
	} {
		if allowed(t, spoke.Client, agentUser, agentGroups, a) {
			t.Errorf("the agent's ServiceAccount may %s %s %s in %q: the chart grants too much", a.verb, a.resource, a.name, a.namespace)
		}
	}
	// The governance add-ons' identity (policy's defaults): policies read with view, enforce nothing,
	// and read no Secret.
	policyUser := "system:serviceaccount:" + agentNamespace + ":flotilla-policy"
	// view's rules are aggregated by kube-controller-manager after the API server starts: the
	// refusals below are checked once it reads, so none holds only for want of them.
	testenv.WaitFor(t, 30*time.Second, "the policies' ServiceAccount to read ConfigMaps (policy.readClusterRole view bound)", func(context.Context) (bool, string, error) {
		return allowed(t, spoke.Client, policyUser, agentGroups, access{verb: "list", resource: "configmaps"}), "not yet", nil
	})
	for _, a := range []access{
		{verb: "get", resource: "secrets", namespace: agentNamespace, name: "hub-kubeconfig-secret"},
		{verb: "list", resource: "secrets"},
		{verb: "create", resource: "configmaps", namespace: "default"},
		{verb: "update", resource: "namespaces", name: "default"},
		{verb: "delete", group: "networking.k8s.io", resource: "networkpolicies", namespace: "default"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings"},
		{verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "configurationpolicies.policy.open-cluster-management.io"},
	} {
		if allowed(t, spoke.Client, policyUser, agentGroups, a) {
			t.Errorf("the policies' ServiceAccount may %s %s %s in %q by default: the chart grants too much", a.verb, a.resource, a.name, a.namespace)
		}
	}
	agentAs, err := kubernetes.NewForConfig(as(spoke.RESTConfig(), agentNamespace, "flotilla-agent"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = agentAs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "lp-escalate"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: agentNamespace, Name: "flotilla-agent"}},
	}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the agent's ServiceAccount bound cluster-admin to itself: err = %v, want Forbidden", err)
	}
}
