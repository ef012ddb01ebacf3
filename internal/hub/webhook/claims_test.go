package webhook

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

func TestReviewManagedClusterClaims(t *testing.T) {
	const region, data = "region.open-cluster-management.io", "federated-learning-sample.client-data"
	claimsMsg := func(user, whose, change string) string {
		return `managedclusters "gpu-east": status.clusterClaims is reported by the cluster's own agent only (from the ` +
			`ClusterClaims on the cluster), and ` + user + ` is not that agent` + whose + `; this write would ` + change +
			`; create, change or delete the ClusterClaim on cluster gpu-east instead, and its agent reports it`
	}
	otherAgent := authenticationv1.UserInfo{
		Username: clusteridentity.User("gpu-west", "a1"), Groups: clusteridentity.Groups("gpu-west"),
	}
	// An agent's name without its cluster's group (not what the hub's certificates say).
	nameOnly := authenticationv1.UserInfo{Username: clusteridentity.User("gpu-east", "a1"), Groups: []string{clusteridentity.ManagedClustersGroup}}
	hubSA := authenticationv1.UserInfo{Username: "system:serviceaccount:open-cluster-management-hub:flotilla-hub"}
	// reported is gpu-east as its agent reported it; each call makes a new one.
	reported := func() *apitest.ClusterWrapper {
		return apitest.MakeCluster("gpu-east").Accepted().Claim(region, "eu").Claim(data, "/data/a")
	}
	cases := map[string]struct {
		user        authenticationv1.UserInfo
		old, cur    *clusterv1.ManagedCluster
		wantDenials []string
	}{
		"the cluster's agent reports its claims": {
			user: agent,
			old:  apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:  reported().Obj(),
		},
		"the cluster's agent changes and removes claims": {
			user: agent,
			old:  reported().Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Claim(region, "us").Obj(),
		},
		"an administrator adds a claim": {
			user:        alice,
			old:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Claim(data, "/etc").Obj(),
			wantDenials: []string{claimsMsg("alice", "", `add claim `+data+`="/etc"`)},
		},
		"an administrator changes a value": {
			user:        alice,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Claim(region, "eu").Claim(data, "/etc").Obj(),
			wantDenials: []string{claimsMsg("alice", "", `change claim `+data+` from "/data/a" to "/etc"`)},
		},
		"an administrator removes every claim": {
			user:        alice,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantDenials: []string{claimsMsg("alice", "", "remove claim "+region+", remove claim "+data)},
		},
		"an administrator reorders claims": {
			user:        alice,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Claim(data, "/data/a").Claim(region, "eu").Obj(),
			wantDenials: []string{claimsMsg("alice", "", "reorder or repeat claims")},
		},
		"an administrator puts a second value in front": {
			user:        alice,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Claim(data, "/etc").Claim(region, "eu").Claim(data, "/data/a").Obj(),
			wantDenials: []string{claimsMsg("alice", "", `change claim `+data+` from "/data/a" to "/etc"`)},
		},
		"another cluster's agent": {
			user:        otherAgent,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Claim(region, "eu").Claim(data, "/etc").Obj(),
			wantDenials: []string{claimsMsg(otherAgent.Username, " (it is cluster gpu-west's)", `change claim `+data+` from "/data/a" to "/etc"`)},
		},
		"an add-on's agent on the cluster": {
			user:        addOnAgent,
			old:         reported().Obj(),
			cur:         reported().Claim("x.example.com", "1").Obj(),
			wantDenials: []string{claimsMsg(addOnAgent.Username, " (it is add-on scorer's agent on cluster gpu-east)", `add claim x.example.com="1"`)},
		},
		"the agent's name without its cluster's group": {
			user:        nameOnly,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantDenials: []string{claimsMsg(nameOnly.Username, " (it is cluster gpu-east's)", "remove claim "+region+", remove claim "+data)},
		},
		"the cluster's group without an agent's name": {
			user:        agentByGroup,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantDenials: []string{claimsMsg("renamed", "", "remove claim "+region+", remove claim "+data)},
		},
		"the hub writes conditions and leaves the claims": {
			user: hubSA,
			old:  reported().Obj(),
			cur: apitest.MakeCluster("gpu-east").Accepted().Claim(region, "eu").Claim(data, "/data/a").
				Condition(metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "Test"}).Obj(),
		},
		"the hub changing a claim is refused too": {
			user:        hubSA,
			old:         reported().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Claim(region, "us").Claim(data, "/data/a").Obj(),
			wantDenials: []string{claimsMsg(hubSA.Username, "", `change claim `+region+` from "eu" to "us"`)},
		},
		"an empty list and none are the same": {
			user: alice,
			old:  &clusterv1.ManagedCluster{ObjectMeta: apitest.MakeCluster("gpu-east").ObjectMeta, Status: clusterv1.ManagedClusterStatus{ClusterClaims: []clusterv1.ManagedClusterClaim{}}},
			cur:  apitest.MakeCluster("gpu-east").Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sar := &fakeSAR{}
			got, err := ReviewManagedCluster(context.Background(), sar.can, tc.user, tc.old, tc.cur)
			if err != nil {
				t.Fatalf("ReviewManagedCluster() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantDenials, got); diff != "" {
				t.Errorf("denials (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeClaimChanges(t *testing.T) {
	c := func(nv ...string) []clusterv1.ManagedClusterClaim {
		var out []clusterv1.ManagedClusterClaim
		for i := 0; i < len(nv); i += 2 {
			out = append(out, clusterv1.ManagedClusterClaim{Name: nv[i], Value: nv[i+1]})
		}
		return out
	}
	cases := map[string]struct {
		old, cur []clusterv1.ManagedClusterClaim
		want     string
	}{
		"add":                 {old: c("a", "1"), cur: c("a", "1", "b", "2"), want: `add claim b="2"`},
		"change":              {old: c("a", "1"), cur: c("a", "2"), want: `change claim a from "1" to "2"`},
		"remove":              {old: c("a", "1", "b", "2"), cur: c("b", "2"), want: "remove claim a"},
		"all three, in order": {old: c("a", "1", "b", "2"), cur: c("c", "3", "b", "9"), want: `add claim c="3", change claim b from "2" to "9", remove claim a`},
		"a repeated name is said once": {
			old: c("a", "1", "a", "1"), cur: c("b", "2", "b", "3"), want: `add claim b="2", remove claim a`,
		},
		"reorder": {old: c("a", "1", "b", "2"), cur: c("b", "2", "a", "1"), want: "reorder or repeat claims"},
		"many": {
			old:  nil,
			cur:  c("a", "1", "b", "1", "c", "1", "d", "1", "e", "1", "f", "1", "g", "1"),
			want: `add claim a="1", add claim b="1", add claim c="1", add claim d="1", add claim e="1" and 2 more changes`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, describeClaimChanges(tc.old, tc.cur)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimsHook(t *testing.T) {
	w := Configuration(Endpoint{URL: "https://127.0.0.1:9443"}, nil).Webhooks
	var got *struct{ Ops, Res, Conditions []string }
	for _, h := range w {
		if h.Name != ClaimsWebhookName {
			continue
		}
		got = &struct{ Ops, Res, Conditions []string }{}
		for _, r := range h.Rules {
			for _, op := range r.Operations {
				got.Ops = append(got.Ops, string(op))
			}
			got.Res = append(got.Res, r.Resources...)
		}
		for _, m := range h.MatchConditions {
			got.Conditions = append(got.Conditions, m.Expression)
		}
	}
	want := &struct{ Ops, Res, Conditions []string }{
		Ops: []string{"UPDATE"}, Res: []string{"managedclusters/status"},
		Conditions: []string{"(has(object.status) && has(object.status.clusterClaims) ? object.status.clusterClaims : []) != " +
			"(has(oldObject.status) && has(oldObject.status.clusterClaims) ? oldObject.status.clusterClaims : [])"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claims webhook (-want +got):\n%s", diff)
	}
}
