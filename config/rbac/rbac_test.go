package rbac

import (
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestParse(t *testing.T) {
	cr, err := ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	if cr.Name != Name || len(cr.Rules) == 0 {
		t.Errorf("ClusterRole %q with %d rules, want %q with some", cr.Name, len(cr.Rules), Name)
	}
	r, err := LeaderElectionRole("elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != Name || r.Namespace != "elsewhere" {
		t.Errorf("Role %s/%s, want elsewhere/%s", r.Namespace, r.Name, Name)
	}
	// The generated namespace is the one the constant names.
	_, gen, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if le := gen[LeaderElectionNamespace]; le == nil || le.Name != Name {
		t.Errorf("role.yaml has no Role %s in LeaderElectionNamespace %q", Name, LeaderElectionNamespace)
	}
	fr, err := FlowerRole()
	if err != nil {
		t.Fatal(err)
	}
	if fr.Name != Name || fr.Namespace != FlowerNamespace || len(fr.Rules) == 0 {
		t.Errorf("flower Role %s/%s with %d rules, want %s/%s with some", fr.Namespace, fr.Name, len(fr.Rules), FlowerNamespace, Name)
	}
}

// TestLeastPrivilege keeps out of the roles what would make the hub an administrator in all but
// name. A failure here means a marker asks for too much: narrow it rather than the test.
func TestLeastPrivilege(t *testing.T) {
	cr, err := ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	r, err := LeaderElectionRole(LeaderElectionNamespace)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := FlowerRole()
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string][]rbacv1.PolicyRule{"ClusterRole": cr.Rules, "Role": r.Rules, "flower Role": fr.Rules}
	for kind, rs := range rules {
		for i, rule := range rs {
			at := fmt.Sprintf("%s %s rule %d (%v %v %v)", kind, Name, i, rule.APIGroups, rule.Resources, rule.Verbs)
			for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
				if slices.Contains(list, rbacv1.ResourceAll) {
					t.Errorf("%s: a wildcard grants whatever comes next", at)
				}
			}
			if len(rule.NonResourceURLs) > 0 {
				t.Errorf("%s: the hub needs no non-resource URLs", at)
			}
			// The one exception: acting as OCM's add-on manager ServiceAccount, named, in the Role's
			// namespace only (in the ClusterRole the name would match in every namespace).
			if kind == "Role" && slices.Equal(rule.Resources, []string{"serviceaccounts"}) && slices.Equal(rule.Verbs, []string{"impersonate"}) &&
				slices.Equal(rule.ResourceNames, []string{"addon-manager-controller-sa"}) {
				continue
			}
			for _, res := range rule.Resources {
				// The other exception: the SuperLink's certificates, in flower-system only (a
				// Role, which holds in its namespace only).
				if kind == "flower Role" && res == "secrets" {
					continue
				}
				// And: creating and deleting Secrets, never reading, listing, watching or updating
				// one: a Flower federation's own SuperLink needs its keys in the federation's
				// namespace; the hub keeps its record in flower-system and copies it there.
				if kind == "ClusterRole" && res == "secrets" && slices.Equal(rule.Verbs, []string{"create", "delete"}) {
					continue
				}
				// And: reading Nodes (get, list; no watch, no write), for the InternalIP that OCM's
				// FederatedLearning controller gives a NodePort listener without an ip. A Node holds
				// no secret.
				if kind == "ClusterRole" && res == "nodes" && slices.Equal(rule.Verbs, []string{"get", "list"}) {
					continue
				}
				switch res {
				case "secrets", "serviceaccounts", "serviceaccounts/token", "pods", "pods/exec", "nodes", "users", "groups":
					t.Errorf("%s: the hub has no business with %s", at, res)
				}
			}
			for _, v := range rule.Verbs {
				switch v {
				case "escalate", "bind", "impersonate", "approve":
					// Each can hand out more than the role holds: only ever for named objects.
					if len(rule.ResourceNames) == 0 {
						t.Errorf("%s: %s without resourceNames", at, v)
					}
				case "deletecollection":
					t.Errorf("%s: the hub deletes objects one at a time", at)
				}
			}
		}
	}
}
