package hub

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
	"github.com/flotilla/flotilla/internal/hub/addon"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/hub/managedserviceaccount"
)

// Adversarial names: each a prefix, suffix or middle of another's derived names, or at the limit
// of a DNS label (63 characters).
var (
	adversarialClusters = []string{
		"x", "token-x", "token", "x-token", "token-token-x", "a", "b", "a-b", "multikueue", "managedcluster",
		"agent", "role", "clusterrole", "addon-x", "deploy-0", "pre-delete", "kubeconfig", "managed-clusters", "cluster", "addon",
		strings.Repeat("a", 63), "token-" + strings.Repeat("b", 57), strings.Repeat("c", 57) + "-token",
	}
	// Add-on names are DNS subdomains: they may hold dots.
	adversarialAddOns = []string{
		"x", "a", "a-b", "a-pre-delete", "a-deploy-0", "multikueue-worker", "managedcluster", "token-x",
		"cluster.x", "x.clusterrole", strings.Repeat("d", 63),
	}
	// ManagedServiceAccount names: their token Secrets take them.
	adversarialManagedServiceAccounts = []string{"x", "token-x", "multikueue", "kubeconfig", "x-hub-kubeconfig", strings.Repeat("e", 253)}
	// Role names may hold ':'.
	adversarialRoles = []string{"r", "writer", "role:writer", "clusterrole:writer", "agent", "x:agent"}
	// Reserved cluster names (issue 19, item 7), for which OCM's identities clash by design: the
	// group of cluster managed-clusters is every agent's group, and the users of clusters cluster
	// and addon read as add-on identities. The webhook refuses them; the identities below are
	// derived for the other names only.
	reservedForIdentities = []string{"managed-clusters", "cluster", "addon"}
)

// object is a named object's place: kind and namespace ("" when cluster-scoped, or for users
// and groups).
type object struct{ kind, namespace, name string }

// namesOf derives every name the hub builds from a cluster's or an add-on's name, for clusters
// and add-ons, with the derivation that made it. The names OCM fixes are among them; names OCM
// fixes that can clash are left out and said why below.
//
// Left out, with the reason they cannot clash or are kept:
//   - ManifestWorks of a ManifestWorkReplicaSet take the set's name (OCM's); the hub updates or
//     deletes one only with the set's UID annotation (internal/hub/workreplicaset).
//   - Built-in names that hold no cluster's or add-on's name (the Lease, dynamic-scoring-config,
//     resource-usage-score): one per namespace.
//   - The add-on credential Secrets on the spoke, <addon>-hub-kubeconfig and
//     <addon>-<signer>-client-cert (OCM's: OCM's add-ons mount them by these names): two add-ons
//     in one install namespace whose custom signers are chosen to match, a with b-io.x/c and a-b
//     with io.x/c, share one. Signers are chosen by template authors, who are administrators.
func namesOf(clusters, addons []string) map[object][]string {
	out := map[object][]string{}
	add := func(kind, ns, name, how string) {
		o := object{kind, ns, name}
		if !slices.Contains(out[o], how) {
			out[o] = append(out[o], how)
		}
	}
	kns := kueue.DefaultNamespace
	refs := func(kind string) []rbacv1.RoleRef {
		var out []rbacv1.RoleRef
		for _, r := range adversarialRoles {
			out = append(out, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: r})
		}
		return out
	}
	for _, c := range clusters {
		// The Kueue namespace: the kubeconfig Secret (OCM's name) and the token Secret and Role.
		add("Secret", kns, kueue.SecretName(c), "kueue.SecretName("+c+")")
		add("Secret", kns, kueueworker.TokenSecret(c), "kueueworker.TokenSecret("+c+")")
		add("Role", kns, kueueworker.TokenRole(c), "kueueworker.TokenRole("+c+")")
		add("RoleBinding", kns, kueueworker.TokenRole(c), "kueueworker.TokenRole("+c+")")
		// The agent's roles (OCM's names).
		add("ClusterRole", "", clusteridentity.ClusterRoleName(c), "clusteridentity.ClusterRoleName("+c+")")
		add("ClusterRoleBinding", "", clusteridentity.ClusterRoleName(c), "clusteridentity.ClusterRoleName("+c+")")
		add("Role", c, clusteridentity.RoleName(c), "clusteridentity.RoleName("+c+")")
		add("RoleBinding", c, clusteridentity.RoleName(c), "clusteridentity.RoleName("+c+")")
		// The cluster's namespace holds the hub's works and add-ons (the built-in
		// kueueworker.AddOnName is among the adversarial add-ons).
		add("ManifestWork", c, kueueworker.WorkName, "kueueworker.WorkName")
		add("Namespace", "", c, "cluster namespace "+c)
		// ManagedServiceAccounts: the agents' binding, and each token Secret beside its
		// ManagedServiceAccount under its name (the ServiceAccount on the cluster takes it too, in
		// the one namespace the cluster's agent serves).
		add("RoleBinding", c, managedserviceaccount.TokenBinding, "managedserviceaccount.TokenBinding")
		// MultiKueue's on the ClusterProfile path: its token Secret is that of the
		// ManagedServiceAccount of its name (a user's of that name is used instead, by design).
		add("ManagedServiceAccount", c, kueueworker.ManagedServiceAccount, "kueueworker.ManagedServiceAccount")
		add("Secret", c, kueueworker.ManagedServiceAccount, "ManagedServiceAccount "+kueueworker.ManagedServiceAccount)
		for _, m := range adversarialManagedServiceAccounts {
			add("Secret", c, m, "ManagedServiceAccount "+m)
		}
		for _, a := range addons {
			add("ManifestWork", c, addontemplate.WorkName(a), "addontemplate.WorkName("+a+")")
			add("ManifestWork", c, addon.PreDeleteWorkName(a), "addon.PreDeleteWorkName("+a+")")
			add("ManagedClusterAddOn", c, a, "add-on "+a)
			// Template add-ons' hub permissions: CurrentCluster in the cluster's namespace (ns
			// c), SingleNamespace in any namespace, another cluster's among them.
			for _, ns := range append([]string{"shared"}, clusters...) {
				for _, ref := range append(refs("Role"), refs("ClusterRole")...) {
					add("RoleBinding", ns, addontemplate.BindingName(a, c, ns, ref),
						fmt.Sprintf("addontemplate.BindingName(%s, %s, %s, %s %s)", a, c, ns, ref.Kind, ref.Name))
				}
			}
		}
		if slices.Contains(reservedForIdentities, c) {
			continue
		}
		// Identities (OCM's): users and groups.
		add("Group", "", clusteridentity.Group(c), "clusteridentity.Group("+c+")")
		for _, agent := range []string{"agent-1", "x", "addon"} {
			add("User", "", clusteridentity.User(c, agent), "clusteridentity.User("+c+", "+agent+")")
		}
		for _, a := range addons {
			add("Group", "", clusteridentity.AddOnClusterGroup(c, a), "clusteridentity.AddOnClusterGroup("+c+", "+a+")")
			add("User", "", clusteridentity.AddOnUser(c, a, addontemplate.AgentName(a)), "clusteridentity.AddOnUser("+c+", "+a+")")
		}
	}
	for _, a := range addons {
		add("Group", "", clusteridentity.AddOnGroup(a), "clusteridentity.AddOnGroup("+a+")")
	}
	add("Group", "", clusteridentity.ManagedClustersGroup, "clusteridentity.ManagedClustersGroup")
	add("Group", "", clusteridentity.AuthenticatedGroup, "clusteridentity.AuthenticatedGroup")
	return out
}

// TestDerivedNamesAreDistinct: no two derivations, for no two of the adversarial clusters and
// add-ons, name one object (kind, namespace, name). Before issue 19, kueueworker.TokenSecret(x)
// was kueue.SecretName(token-x): cluster x's agent could read and rewrite token-x's kubeconfig.
func TestDerivedNamesAreDistinct(t *testing.T) {
	names := namesOf(adversarialClusters, adversarialAddOns)
	var clashes []string
	for o, hows := range names {
		if len(hows) > 1 {
			clashes = append(clashes, fmt.Sprintf("%s %s/%s: %s", o.kind, o.namespace, o.name, strings.Join(hows, " and ")))
		}
	}
	slices.Sort(clashes)
	for _, c := range clashes {
		t.Error(c)
	}
	if len(names) < 1000 {
		t.Errorf("only %d names derived: the derivations above are not all running", len(names))
	}
}
