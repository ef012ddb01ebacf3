package registration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

// An agent reports on its ManagedCluster only through the status subresource: with update or
// patch on the cluster itself it could lift an administrator's taint, label itself into sets and
// placements, point the Kueue controller at another API server or stretch its lease.
func TestClusterRulesGiveTheAgentStatusOnly(t *testing.T) {
	readOwn := rbacv1.PolicyRule{
		APIGroups: []string{clusterGroup}, Resources: []string{"managedclusters"}, ResourceNames: []string{"gpu-east"},
		Verbs: []string{"get", "list", "watch"},
	}
	cases := map[string]struct {
		accepted bool
		want     []rbacv1.PolicyRule
	}{
		"not accepted: read its own cluster": {want: []rbacv1.PolicyRule{readOwn}},
		"accepted: also its status and certificate requests": {
			accepted: true,
			want: []rbacv1.PolicyRule{
				readOwn,
				{
					APIGroups: []string{clusterGroup}, Resources: []string{"managedclusters/status"}, ResourceNames: []string{"gpu-east"},
					Verbs: []string{"update", "patch"},
				},
				{APIGroups: []string{certsGroup}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterRules("gpu-east", tc.accepted)); diff != "" {
				t.Errorf("clusterRules (-want +got):\n%s", diff)
			}
		})
	}
}

// What a denied or deleted cluster's agent keeps while its works are removed: its namespace's
// ManifestWorks, to read them, report their removal and drop its finalizer. Not create or delete
// works, nothing else in the namespace (no Secrets, no leases, no add-ons), nothing cluster-wide.
func TestWorkCleanupRulesKeepOnlyWhatRemovalNeeds(t *testing.T) {
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{workGroup}, Resources: []string{"manifestworks"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{workGroup}, Resources: []string{"manifestworks/status"}, Verbs: []string{"update", "patch"}},
	}
	if diff := cmp.Diff(want, workCleanupRules()); diff != "" {
		t.Errorf("workCleanupRules (-want +got):\n%s", diff)
	}
}
