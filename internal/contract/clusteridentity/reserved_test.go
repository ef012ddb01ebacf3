package clusteridentity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseUser(t *testing.T) {
	type parsed struct {
		Cluster, Agent string
		OK             bool
	}
	cases := map[string]struct {
		user string
		want parsed
	}{
		"an agent":                 {user: User("gpu-east", "a1"), want: parsed{"gpu-east", "a1", true}},
		"agent id with a colon":    {user: User("gpu-east", "a:1"), want: parsed{"gpu-east", "a:1", true}},
		"no agent id":              {user: Group("gpu-east")},
		"empty cluster":            {user: prefix + ":a1"},
		"another prefix":           {user: "system:serviceaccount:gpu-east:a1"},
		"an add-on agent":          {user: AddOnUser("gpu-east", "scorer", "a1")},
		"cluster managed-clusters": {user: User("managed-clusters", "a1")},
		"cluster cluster":          {user: User("cluster", "a1")},
		"cluster addon":            {user: User("addon", "scorer")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, a, ok := ParseUser(tc.user)
			if diff := cmp.Diff(tc.want, parsed{c, a, ok}); diff != "" {
				t.Errorf("ParseUser(%q) (-want +got):\n%s", tc.user, diff)
			}
		})
	}
}

// Each reserved name is reserved for a reason: an identity of that cluster is another identity.
// Names next to them are ordinary clusters, whose identities collide with nothing.
func TestReservedClusterNames(t *testing.T) {
	type collisions struct {
		// GroupIsEveryAgents: the cluster's group is the group every agent has.
		GroupIsEveryAgents bool
		// UserIsAddOnAgent: an agent user name of the cluster is an add-on agent's.
		UserIsAddOnAgent bool
		// UserIsAddOnGroup: an agent user name of the cluster is the name of an add-on group.
		UserIsAddOnGroup bool
		Reserved         bool
	}
	cases := map[string]struct {
		cluster string
		want    collisions
	}{
		"managed-clusters": {cluster: "managed-clusters", want: collisions{GroupIsEveryAgents: true, Reserved: true}},
		"cluster":          {cluster: "cluster", want: collisions{UserIsAddOnAgent: true, Reserved: true}},
		"addon":            {cluster: "addon", want: collisions{UserIsAddOnGroup: true, Reserved: true}},
		"managed-cluster":  {cluster: "managed-cluster"},
		"clusters":         {cluster: "clusters"},
		"addons":           {cluster: "addons"},
		"gpu-east":         {cluster: "gpu-east"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, _, addOnAgent := ParseAddOnUser(User(tc.cluster, "gpu-west:addon:scorer:agent:a1"))
			got := collisions{
				GroupIsEveryAgents: Group(tc.cluster) == ManagedClustersGroup,
				UserIsAddOnAgent:   addOnAgent,
				UserIsAddOnGroup:   User(tc.cluster, "scorer") == AddOnGroup("scorer"),
				Reserved:           Reserved(tc.cluster),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cluster %q (-want +got):\n%s", tc.cluster, diff)
			}
		})
	}
}
