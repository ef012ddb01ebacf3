package registration

import (
	"context"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// coversSecrets says whether rule grants anything on core Secrets, wildcards included.
func coversSecrets(rule rbacv1.PolicyRule) bool {
	group := slices.Contains(rule.APIGroups, "") || slices.Contains(rule.APIGroups, rbacv1.APIGroupAll)
	resource := slices.ContainsFunc(rule.Resources, func(r string) bool {
		return r == "secrets" || r == rbacv1.ResourceAll || strings.HasPrefix(r, "secrets/")
	})
	return group && resource && len(rule.Verbs) > 0
}

// TestAgentRolesGrantNoSecrets: the Role an accepted cluster's agents get in the cluster's
// namespace on the hub, and their ClusterRole, grant nothing on Secrets. The hub keeps
// credentials of other clusters and add-ons in Secrets; an agent has no business with any. The
// integration tests check this against an API server; this pins it on the objects the hub writes.
func TestAgentRolesGrantNoSecrets(t *testing.T) {
	mc := makeCluster("gpu-east").Accepted().Finalizer(CleanupFinalizer).Obj()
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mc).WithStatusSubresource(mc).Build()
	r := &ManagedClusterReconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(t0)}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: mc.Name}}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: mc.Name, Name: clusteridentity.RoleName(mc.Name)}, role); err != nil {
		t.Fatalf("the agent's Role in its namespace: %v", err)
	}
	clusterRole := &rbacv1.ClusterRole{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: clusteridentity.ClusterRoleName(mc.Name)}, clusterRole); err != nil {
		t.Fatalf("the agent's ClusterRole: %v", err)
	}
	for what, rules := range map[string][]rbacv1.PolicyRule{
		"Role " + mc.Name + "/" + role.Name: role.Rules,
		"ClusterRole " + clusterRole.Name:   clusterRole.Rules,
	} {
		if len(rules) == 0 {
			t.Errorf("%s has no rules: the test would pass for nothing", what)
		}
		for _, rule := range rules {
			if coversSecrets(rule) {
				t.Errorf("%s grants %v on Secrets: %+v", what, rule.Verbs, rule)
			}
		}
	}
}

// TestCoversSecrets: the check above sees every way a rule may name Secrets.
func TestCoversSecrets(t *testing.T) {
	get := []string{"get"}
	cases := map[string]struct {
		rule rbacv1.PolicyRule
		want bool
	}{
		"secrets":              {rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: get}, true},
		"one secret by name":   {rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"x"}, Verbs: get}, true},
		"every resource":       {rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*"}, Verbs: get}, true},
		"every group":          {rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"secrets"}, Verbs: get}, true},
		"a subresource":        {rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets/status"}, Verbs: get}, true},
		"configmaps":           {rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: get}, false},
		"another group's":      {rbacv1.PolicyRule{APIGroups: []string{"example.io"}, Resources: []string{"secrets"}, Verbs: get}, false},
		"every example.io one": {rbacv1.PolicyRule{APIGroups: []string{"example.io"}, Resources: []string{"*"}, Verbs: get}, false},
	}
	for name, tc := range cases {
		if got := coversSecrets(tc.rule); got != tc.want {
			t.Errorf("%s: coversSecrets = %v, want %v", name, got, tc.want)
		}
	}
}
