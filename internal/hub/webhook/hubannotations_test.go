package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// hubUser is the hub's user name in these tests.
const hubUser = "system:serviceaccount:open-cluster-management-hub:flotilla-hub"

func (w *clusterWrapper) annotate(key, value string) *clusterWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	return w
}

func TestHubAnnotationEdits(t *testing.T) {
	hub := authenticationv1.UserInfo{Username: hubUser, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	// An administrator in system:masters is not the hub either.
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters", "system:authenticated"}}
	lost := func() *clusterWrapper {
		return makeCluster("gpu-east").annotate(fencing.AnnotationTiming, "lease=5s fence=20s lost=30s").
			annotate(fencing.AnnotationEpoch, "1").annotate(fencing.AnnotationLostAt, "2026-12-05T10:00:00Z")
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
			old: lost().obj(), cur: lost().annotate(fencing.AnnotationEpoch, "2").obj()},
		"the hub sets the timing": {user: hub, hub: hubUser,
			old: makeCluster("gpu-east").obj(), cur: makeCluster("gpu-east").annotate(fencing.AnnotationTiming, "lease=5s fence=20s lost=30s").obj()},
		"a user sets the epoch and lost-at": {user: alice, hub: hubUser,
			old:  makeCluster("gpu-east").obj(),
			cur:  makeCluster("gpu-east").annotate(fencing.AnnotationEpoch, "7").annotate(fencing.AnnotationLostAt, "2026-12-05T10:00:00Z").obj(),
			want: refusal("alice", `add failover.flotilla.io/epoch="7", add failover.flotilla.io/lost-at="2026-12-05T10:00:00Z"`)},
		"a user stretches the timing": {user: alice, hub: hubUser,
			old:  lost().obj(),
			cur:  lost().annotate(fencing.AnnotationTiming, "lease=1h0m0s fence=2h0m0s lost=3h0m5s").obj(),
			want: refusal("alice", `change failover.flotilla.io/timing from "lease=5s fence=20s lost=30s" to "lease=1h0m0s fence=2h0m0s lost=3h0m5s"`)},
		"an administrator removes the timing": {user: admin, hub: hubUser,
			old: lost().obj(), cur: func() *clusterv1.ManagedCluster {
				c := lost().obj()
				delete(c.Annotations, fencing.AnnotationTiming)
				return c
			}(),
			want: refusal("admin", `remove failover.flotilla.io/timing="lease=5s fence=20s lost=30s"`)},
		"the cluster's agent lowers the epoch": {user: agent, hub: hubUser,
			old: lost().obj(), cur: lost().annotate(fencing.AnnotationEpoch, "0").obj(),
			want: refusal(agent.Username, `change failover.flotilla.io/epoch from "1" to "0"`)},
		"a user creates a cluster with an epoch": {user: alice, hub: hubUser,
			old: &clusterv1.ManagedCluster{}, cur: makeCluster("gpu-east").annotate(fencing.AnnotationEpoch, "3").obj(),
			want: refusal("alice", `add failover.flotilla.io/epoch="3"`)},
		"any key with the prefix": {user: alice, hub: hubUser,
			old: makeCluster("gpu-east").obj(), cur: makeCluster("gpu-east").annotate("failover.flotilla.io/anything", "x").obj(),
			want: refusal("alice", `add failover.flotilla.io/anything="x"`)},
		"a user writes other annotations and keeps the hub's": {user: alice, hub: hubUser,
			old: lost().obj(), cur: lost().annotate("example.com/owner", "team-a").obj()},
		"a user's annotation with a longer prefix": {user: alice, hub: hubUser,
			old: makeCluster("gpu-east").obj(), cur: makeCluster("gpu-east").annotate("failover.flotilla.io.example.com/x", "y").obj()},
		"a user with the hub's groups but another name": {user: authenticationv1.UserInfo{Username: "mallory", Groups: hub.Groups}, hub: hubUser,
			old: makeCluster("gpu-east").obj(), cur: makeCluster("gpu-east").annotate(fencing.AnnotationEpoch, "1").obj(),
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
