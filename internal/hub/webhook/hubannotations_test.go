package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// hubUser is the hub's user name in these tests.
const hubUser = "system:serviceaccount:open-cluster-management-hub:flotilla-hub"

func TestHubAnnotationEdits(t *testing.T) {
	hub := authenticationv1.UserInfo{Username: hubUser, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	// An administrator in system:masters is not the hub either.
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters", "system:authenticated"}}
	lost := func() *apitest.ClusterWrapper {
		return apitest.MakeCluster("gpu-east").Annotation(fencing.AnnotationTiming, "lease=5s fence=20s lost=30s").
			Annotation(fencing.AnnotationEpoch, "1").Annotation(fencing.AnnotationLostAt, "2026-12-05T10:00:00Z")
	}
	refusal := func(user, changes string) []string {
		return []string{`managedclusters "gpu-east": the annotations failover.flotilla.io/* are the hub's (user ` + hubUser +
			`): it writes failover.flotilla.io/timing from the FailoverPolicies of the cluster's sets, and raises ` +
			`failover.flotilla.io/epoch and failover.flotilla.io/lost-at when it declares the cluster lost, which the ` +
			`cluster's agent acts on; ` + user + ` is not the hub, and this write would ` + changes +
			`; keep those annotations as they are, and change a FailoverPolicy to change the cluster's timing`}
	}
	cases := map[string]struct {
		hub      string
		user     authenticationv1.UserInfo
		old, cur *clusterv1.ManagedCluster
		want     []string
	}{
		"the hub raises the epoch": {user: hub, hub: hubUser,
			old: lost().Obj(), cur: lost().Annotation(fencing.AnnotationEpoch, "2").Obj()},
		"the hub sets the timing": {user: hub, hub: hubUser,
			old: apitest.MakeCluster("gpu-east").Obj(), cur: apitest.MakeCluster("gpu-east").Annotation(fencing.AnnotationTiming, "lease=5s fence=20s lost=30s").Obj()},
		"a user sets the epoch and lost-at": {user: alice, hub: hubUser,
			old:  apitest.MakeCluster("gpu-east").Obj(),
			cur:  apitest.MakeCluster("gpu-east").Annotation(fencing.AnnotationEpoch, "7").Annotation(fencing.AnnotationLostAt, "2026-12-05T10:00:00Z").Obj(),
			want: refusal("alice", `add failover.flotilla.io/epoch="7", add failover.flotilla.io/lost-at="2026-12-05T10:00:00Z"`)},
		"a user stretches the timing": {user: alice, hub: hubUser,
			old:  lost().Obj(),
			cur:  lost().Annotation(fencing.AnnotationTiming, "lease=1h0m0s fence=2h0m0s lost=3h0m5s").Obj(),
			want: refusal("alice", `change failover.flotilla.io/timing from "lease=5s fence=20s lost=30s" to "lease=1h0m0s fence=2h0m0s lost=3h0m5s"`)},
		"an administrator removes the timing": {user: admin, hub: hubUser,
			old: lost().Obj(), cur: func() *clusterv1.ManagedCluster {
				c := lost().Obj()
				delete(c.Annotations, fencing.AnnotationTiming)
				return c
			}(),
			want: refusal("admin", `remove failover.flotilla.io/timing="lease=5s fence=20s lost=30s"`)},
		"the cluster's agent lowers the epoch": {user: agent, hub: hubUser,
			old: lost().Obj(), cur: lost().Annotation(fencing.AnnotationEpoch, "0").Obj(),
			want: refusal(agent.Username, `change failover.flotilla.io/epoch from "1" to "0"`)},
		"a user creates a cluster with an epoch": {user: alice, hub: hubUser,
			old: &clusterv1.ManagedCluster{}, cur: apitest.MakeCluster("gpu-east").Annotation(fencing.AnnotationEpoch, "3").Obj(),
			want: refusal("alice", `add failover.flotilla.io/epoch="3"`)},
		"any key with the prefix": {user: alice, hub: hubUser,
			old: apitest.MakeCluster("gpu-east").Obj(), cur: apitest.MakeCluster("gpu-east").Annotation("failover.flotilla.io/anything", "x").Obj(),
			want: refusal("alice", `add failover.flotilla.io/anything="x"`)},
		"a user writes other annotations and keeps the hub's": {user: alice, hub: hubUser,
			old: lost().Obj(), cur: lost().Annotation("example.com/owner", "team-a").Obj()},
		"a user's annotation with a longer prefix": {user: alice, hub: hubUser,
			old: apitest.MakeCluster("gpu-east").Obj(), cur: apitest.MakeCluster("gpu-east").Annotation("failover.flotilla.io.example.com/x", "y").Obj()},
		"a user with the hub's groups but another name": {user: authenticationv1.UserInfo{Username: "mallory", Groups: hub.Groups}, hub: hubUser,
			old: apitest.MakeCluster("gpu-east").Obj(), cur: apitest.MakeCluster("gpu-east").Annotation(fencing.AnnotationEpoch, "1").Obj(),
			want: refusal("mallory", `add failover.flotilla.io/epoch="1"`)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := hubAnnotationEdits(`managedclusters "gpu-east"`, tc.hub, tc.user, tc.old, tc.cur)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hubAnnotationEdits (-want +got):\n%s", diff)
			}
		})
	}
}
