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
