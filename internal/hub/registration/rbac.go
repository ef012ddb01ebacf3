package registration

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

const (
	clusterGroup = "cluster.open-cluster-management.io"
	workGroup    = "work.open-cluster-management.io"
	addonGroup   = "addon.open-cluster-management.io"
	coordGroup   = "coordination.k8s.io"
	certsGroup   = "certificates.k8s.io"
	eventsGroup  = "events.k8s.io"
	usageGroup   = "usage.flotilla.io"
	authGroup    = "authentication.open-cluster-management.io"
	policyGroup  = "policy.open-cluster-management.io"
)

var read = []string{"get", "list", "watch"}

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=create;get

// clusterRules are what a cluster's agents may do cluster-wide: before acceptance, read their own
// ManagedCluster; after, also write its status, and request certificates (renewals).
//
// The agent never writes its ManagedCluster itself: the bootstrap identity creates it, and after
// that the agent reports only status. Its spec and labels are the administrator's and the hub's:
// placements trust the labels, taints quarantine a cluster, and the Kueue controller trusts
// spec.managedClusterClientConfigs. So the agent gets the status subresource only (the API server
// drops everything but status from a write there). OCM's role also grants update on the cluster,
// which OCM's klusterlet uses for one thing, adding its API server's URLs to
// spec.managedClusterClientConfigs, and it ignores a Forbidden answer to that.
func clusterRules(cluster string, accepted bool) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{{
		APIGroups: []string{clusterGroup}, Resources: []string{"managedclusters"},
		ResourceNames: []string{cluster}, Verbs: read,
	}}
	if !accepted {
		return rules
	}
	return append(rules,
		rbacv1.PolicyRule{
			APIGroups: []string{clusterGroup}, Resources: []string{"managedclusters/status"},
			ResourceNames: []string{cluster}, Verbs: []string{"update", "patch"},
		},
		// Renewals: file a request and read it back by name. No list or watch: other clusters'
		// requests are none of this agent's business.
		rbacv1.PolicyRule{
			APIGroups: []string{certsGroup}, Resources: []string{"certificatesigningrequests"},
			Verbs: []string{"create", "get"},
		},
	)
}

// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks/status,verbs=update;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=addonplacementscores,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=addonplacementscores/status,verbs=update;patch
// +kubebuilder:rbac:groups=usage.flotilla.io,resources=resourceusages,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=usage.flotilla.io,resources=resourceusages/status,verbs=update;patch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups="",resources=configmaps,resourceNames=dynamic-scoring-config,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.open-cluster-management.io,resources=managedserviceaccounts,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.open-cluster-management.io,resources=managedserviceaccounts/status,verbs=update;patch
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policies,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policies/status,verbs=update;patch

// namespaceRules are what an accepted cluster's agents may do in the cluster's namespace on the
// hub, and nowhere else: renew the lease, read and report on their works and add-ons, record events,
// and write the scores of the built-in add-ons.
// The work agent deletes a work once it has been Complete for ttlSecondsAfterFinished, as OCM's.
func namespaceRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{coordGroup}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "update"}},
		{APIGroups: []string{workGroup}, Resources: []string{"manifestworks"}, Verbs: []string{"get", "list", "watch", "update", "patch", "delete"}},
		{APIGroups: []string{workGroup}, Resources: []string{"manifestworks/status"}, Verbs: []string{"update", "patch"}},
		{APIGroups: []string{addonGroup}, Resources: []string{"managedclusteraddons"}, Verbs: read},
		{APIGroups: []string{addonGroup}, Resources: []string{"managedclusteraddons/status"}, Verbs: []string{"update", "patch"}},
		{APIGroups: []string{"", eventsGroup}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		// Built-in add-ons (internal/agent/builtin) write their scores with the agent's identity.
		{APIGroups: []string{clusterGroup}, Resources: []string{"addonplacementscores"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{clusterGroup}, Resources: []string{"addonplacementscores/status"}, Verbs: []string{"update", "patch"}},
		// The built-in add-on resource-usage reports the cluster's figures.
		{APIGroups: []string{usageGroup}, Resources: []string{"resourceusages"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{usageGroup}, Resources: []string{"resourceusages/status"}, Verbs: []string{"update", "patch"}},
		// The built-in add-on dynamic-scoring reads and watches (by a field selector on its name) the
		// scorers the hub lists for it, and no other ConfigMap.
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"dynamic-scoring-config"}, Verbs: []string{"get", "list", "watch"}},
		// The built-in add-on managed-serviceaccount serves the cluster's ManagedServiceAccounts and
		// reports on them. It writes their token Secrets through the Role the hub keeps for exactly
		// those Secrets (internal/hub/managedserviceaccount), and no other Secret.
		{APIGroups: []string{authGroup}, Resources: []string{"managedserviceaccounts"}, Verbs: read},
		{APIGroups: []string{authGroup}, Resources: []string{"managedserviceaccounts/status"}, Verbs: []string{"update", "patch"}},
		// The built-in add-on governance-policy-framework reads the policies the hub replicates
		// into the namespace and reports their compliance: their status, never their spec.
		{APIGroups: []string{policyGroup}, Resources: []string{"policies"}, Verbs: read},
		{APIGroups: []string{policyGroup}, Resources: []string{"policies/status"}, Verbs: []string{"update", "patch"}},
	}
}

func groupSubject(cluster string) []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: clusteridentity.Group(cluster)}}
}

// workCleanupRules are what the agent of a denied or deleted cluster keeps in its namespace until
// its works are gone: read its ManifestWorks, report their removal and remove its finalizer.
func workCleanupRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{workGroup}, Resources: []string{"manifestworks"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{workGroup}, Resources: []string{"manifestworks/status"}, Verbs: []string{"update", "patch"}},
	}
}
