package webhook

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// fakeSAR grants each user the permissions listed for it and records what it was asked.
type fakeSAR struct {
	grants map[string][]Permission
	asked  []Permission
	err    error
}

func (f *fakeSAR) can(_ context.Context, user authenticationv1.UserInfo, p Permission) (bool, error) {
	f.asked = append(f.asked, p)
	if f.err != nil {
		return false, f.err
	}
	return slices.Contains(f.grants[user.Username], p), nil
}

var (
	alice = authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}}
	agent = authenticationv1.UserInfo{
		Username: clusteridentity.User("gpu-east", "a1"),
		Groups:   append(clusteridentity.Groups("gpu-east"), "system:authenticated"),
	}
	addOnAgent = authenticationv1.UserInfo{
		Username: clusteridentity.AddOnUser("gpu-east", "scorer", "a1"),
		Groups:   append(clusteridentity.AddOnGroups("gpu-east", "scorer"), "system:authenticated"),
	}
	// agentByGroup has an unusual name but an agent's certificate groups.
	agentByGroup = authenticationv1.UserInfo{Username: "renamed", Groups: clusteridentity.Groups("gpu-east")}
	t0           = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

const (
	unreachable = clusterv1.ManagedClusterTaintUnreachable
	unavailable = clusterv1.ManagedClusterTaintUnavailable
	quarantine  = "example.com/quarantine"
	noSelect    = clusterv1.TaintEffectNoSelect
)

func TestReviewManagedCluster(t *testing.T) {
	acceptMsg := `managedclusters "gpu-east": setting spec.hubAcceptsClient to true needs permission to update ` +
		`managedclusters/accept on "gpu-east" in group register.open-cluster-management.io; ask a hub administrator ` +
		`to bind a role with it, or run flotilla accept as one`
	joinMsg := func(what, set string) string {
		return `managedclusters "gpu-east": ` + what + ` needs permission to create managedclustersets/join on "` + set +
			`" in group cluster.open-cluster-management.io; ask a hub administrator to bind a role with it`
	}
	agentMsg := func(user, what string) string {
		return `managedclusters "gpu-east": the cluster's agent ` + user + ` may not ` + what + `; ask a hub administrator to make the change`
	}
	adminTaintMsg := func(user, change, key string) string {
		return agentMsg(user, change+` taint `+key+` in spec.taints: taints other than the hub's are a hub administrator's `+
			`(a quarantine, a maintenance window), so keep the entries with that key as they are`)
	}
	taintMsg := func(user, change, key string) string {
		return `managedclusters "gpu-east": the cluster's agent ` + user + ` may not ` + change + ` taint ` + key +
			` in spec.taints; the hub adds and removes it from the cluster's ManagedClusterConditionAvailable ` +
			`condition, so keep the entries with that key as they are`
	}
	cases := map[string]struct {
		user        authenticationv1.UserInfo
		grants      []Permission
		old, cur    *clusterv1.ManagedCluster
		wantDenials []string
		wantAsked   []Permission
	}{
		"create unaccepted without a set needs nothing": {
			user: alice,
			cur:  apitest.MakeCluster("gpu-east").Obj(),
		},
		"create accepted without permission": {
			user:        alice,
			cur:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantDenials: []string{acceptMsg},
			wantAsked:   []Permission{AcceptPermission("gpu-east")},
		},
		"create accepted with permission": {
			user:      alice,
			grants:    []Permission{AcceptPermission("gpu-east")},
			cur:       apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantAsked: []Permission{AcceptPermission("gpu-east")},
		},
		"accepting another cluster does not help": {
			user:        alice,
			grants:      []Permission{AcceptPermission("gpu-west")},
			old:         apitest.MakeCluster("gpu-east").Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantDenials: []string{acceptMsg},
			wantAsked:   []Permission{AcceptPermission("gpu-east")},
		},
		"accept on update with permission": {
			user:      alice,
			grants:    []Permission{AcceptPermission("gpu-east")},
			old:       apitest.MakeCluster("gpu-east").Obj(),
			cur:       apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantAsked: []Permission{AcceptPermission("gpu-east")},
		},
		"staying accepted needs nothing": {
			user: alice,
			old:  apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Obj(),
		},
		"denying needs nothing": {
			user: alice,
			old:  apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:  apitest.MakeCluster("gpu-east").Obj(),
		},
		"create in a set without join": {
			user:        alice,
			cur:         apitest.MakeCluster("gpu-east").ClusterSet("red").Obj(),
			wantDenials: []string{joinMsg(`setting label cluster.open-cluster-management.io/clusterset to "red" (joining set "red")`, "red")},
			wantAsked:   []Permission{JoinPermission("red")},
		},
		"create in a set with join": {
			user:      alice,
			grants:    []Permission{JoinPermission("red")},
			cur:       apitest.MakeCluster("gpu-east").ClusterSet("red").Obj(),
			wantAsked: []Permission{JoinPermission("red")},
		},
		"an empty label names no set": {
			user: alice,
			cur:  apitest.MakeCluster("gpu-east").ClusterSet("").Obj(),
		},
		"moving needs join on both sets, old missing": {
			user:   alice,
			grants: []Permission{JoinPermission("blue")},
			old:    apitest.MakeCluster("gpu-east").ClusterSet("red").Obj(),
			cur:    apitest.MakeCluster("gpu-east").ClusterSet("blue").Obj(),
			wantDenials: []string{joinMsg(`changing label cluster.open-cluster-management.io/clusterset from "red" to "blue" (leaving set "red")`,
				"red")},
			wantAsked: []Permission{JoinPermission("red"), JoinPermission("blue")},
		},
		"moving needs join on both sets, new missing": {
			user:   alice,
			grants: []Permission{JoinPermission("red")},
			old:    apitest.MakeCluster("gpu-east").ClusterSet("red").Obj(),
			cur:    apitest.MakeCluster("gpu-east").ClusterSet("blue").Obj(),
			wantDenials: []string{joinMsg(`changing label cluster.open-cluster-management.io/clusterset from "red" to "blue" (joining set "blue")`,
				"blue")},
			wantAsked: []Permission{JoinPermission("red"), JoinPermission("blue")},
		},
		"moving with both": {
			user:      alice,
			grants:    []Permission{JoinPermission("red"), JoinPermission("blue")},
			old:       apitest.MakeCluster("gpu-east").ClusterSet("red").Obj(),
			cur:       apitest.MakeCluster("gpu-east").ClusterSet("blue").Obj(),
			wantAsked: []Permission{JoinPermission("red"), JoinPermission("blue")},
		},
		"leaving needs join on the old set": {
			user:        alice,
			old:         apitest.MakeCluster("gpu-east").ClusterSet("red").Obj(),
			cur:         apitest.MakeCluster("gpu-east").Obj(),
			wantDenials: []string{joinMsg(`removing label cluster.open-cluster-management.io/clusterset (leaving set "red")`, "red")},
			wantAsked:   []Permission{JoinPermission("red")},
		},
		"staying in a set needs no join, accepting still needs accept": {
			user:        alice,
			old:         apitest.MakeCluster("gpu-east").ClusterSet("red").Obj(),
			cur:         apitest.MakeCluster("gpu-east").ClusterSet("red").Accepted().Obj(),
			wantDenials: []string{acceptMsg},
			wantAsked:   []Permission{AcceptPermission("gpu-east")},
		},
		"accepting and joining without either lists both": {
			user: alice,
			cur:  apitest.MakeCluster("gpu-east").Accepted().ClusterSet("red").Obj(),
			wantDenials: []string{
				acceptMsg,
				joinMsg(`setting label cluster.open-cluster-management.io/clusterset to "red" (joining set "red")`, "red"),
			},
			wantAsked: []Permission{AcceptPermission("gpu-east"), JoinPermission("red")},
		},
		"agent removes the unreachable taint": {
			user:        agent,
			old:         apitest.MakeCluster("gpu-east").Accepted().Taint(unreachable, noSelect, t0).Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantDenials: []string{taintMsg(agent.Username, "remove", unreachable)},
		},
		"agent adds the unavailable taint": {
			user:        agent,
			old:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Taint(unavailable, noSelect, t0).Obj(),
			wantDenials: []string{taintMsg(agent.Username, "add", unavailable)},
		},
		"agent changes when the unreachable taint was added": {
			user:        agent,
			old:         apitest.MakeCluster("gpu-east").Accepted().Taint(unreachable, noSelect, t0).Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Taint(unreachable, noSelect, t0.Add(time.Hour)).Obj(),
			wantDenials: []string{taintMsg(agent.Username, "change", unreachable)},
		},
		"agent known by its group": {
			user:        agentByGroup,
			old:         apitest.MakeCluster("gpu-east").Accepted().Taint(unreachable, noSelect, t0).Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			wantDenials: []string{taintMsg("renamed", "remove", unreachable)},
		},
		"agent keeps the hub's taints and adds its own": {
			user:        agent,
			old:         apitest.MakeCluster("gpu-east").Accepted().Taint(unreachable, noSelect, t0).Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Taint("gpu.flotilla.io/maintenance", noSelect, t0).Taint(unreachable, noSelect, t0).Obj(),
			wantDenials: []string{adminTaintMsg(agent.Username, "add", "gpu.flotilla.io/maintenance")},
		},
		"agent lifts an administrator's quarantine": {
			user:        agent,
			old:         apitest.MakeCluster("gpu-east").Accepted().Taint(quarantine, noSelect, t0).Taint(unreachable, noSelect, t0).Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Taint(unreachable, noSelect, t0).Obj(),
			wantDenials: []string{adminTaintMsg(agent.Username, "remove", quarantine)},
		},
		"agent softens an administrator's quarantine": {
			user:        agent,
			old:         apitest.MakeCluster("gpu-east").Accepted().Taint(quarantine, noSelect, t0).Obj(),
			cur:         apitest.MakeCluster("gpu-east").Accepted().Taint(quarantine, clusterv1.TaintEffectPreferNoSelect, t0).Obj(),
			wantDenials: []string{adminTaintMsg(agent.Username, "change", quarantine)},
		},
		"agent adds a label": {
			user: agent,
			old:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "a").Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "a").Label("tenant", "b").Obj(),
			wantDenials: []string{agentMsg(agent.Username, `add label tenant="b" (metadata.labels): placements and cluster sets `+
				`select clusters by their labels, so a hub administrator sets them`)},
		},
		"agent changes and removes labels": {
			user: agent,
			old:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "a").Label("zone", "eu").Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "b").Obj(),
			wantDenials: []string{
				agentMsg(agent.Username, `change label team from "a" to "b" (metadata.labels): placements and cluster sets `+
					`select clusters by their labels, so a hub administrator sets them`),
				agentMsg(agent.Username, `remove label zone="eu" (metadata.labels): placements and cluster sets `+
					`select clusters by their labels, so a hub administrator sets them`),
			},
		},
		"agent moves itself to another set": {
			user:   agent,
			grants: []Permission{JoinPermission("red"), JoinPermission("blue")},
			old:    apitest.MakeCluster("gpu-east").Accepted().ClusterSet("red").Obj(),
			cur:    apitest.MakeCluster("gpu-east").Accepted().ClusterSet("blue").Obj(),
			wantDenials: []string{agentMsg(agent.Username, `change label cluster.open-cluster-management.io/clusterset from "red" `+
				`to "blue" (metadata.labels): placements and cluster sets select clusters by their labels, so a hub administrator sets them`)},
			wantAsked: []Permission{JoinPermission("red"), JoinPermission("blue")},
		},
		"agent sets its client configs": {
			user: agent,
			old:  apitest.MakeCluster("gpu-east").Accepted().ClientConfig("https://api.gpu-east.example.com:6443", []byte("ca")).Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().ClientConfig("https://attacker.example.com:6443", []byte("ca")).Obj(),
			wantDenials: []string{agentMsg(agent.Username, `change spec.managedClusterClientConfigs: the hub trusts these addresses `+
				`of the cluster's API server (the Kueue controller connects to them), so they are set when the cluster registers`)},
		},
		"agent adds a client config": {
			user: agent,
			old:  apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().ClientConfig("https://api.gpu-east.example.com:6443", []byte("ca")).Obj(),
			wantDenials: []string{agentMsg(agent.Username, `change spec.managedClusterClientConfigs: the hub trusts these addresses `+
				`of the cluster's API server (the Kueue controller connects to them), so they are set when the cluster registers`)},
		},
		"agent stretches its lease": {
			user: agent,
			old:  apitest.MakeCluster("gpu-east").Accepted().LeaseSeconds(60).Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().LeaseSeconds(86400).Obj(),
			wantDenials: []string{agentMsg(agent.Username, `change spec.leaseDurationSeconds from 60 to 86400: the hub judges the `+
				`cluster unreachable after 5 lease durations without a renewal`)},
		},
		"agent denies itself": {
			user:        agent,
			old:         apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:         apitest.MakeCluster("gpu-east").Obj(),
			wantDenials: []string{agentMsg(agent.Username, `change spec.hubAcceptsClient to false: accepting and denying a cluster is a hub administrator's decision`)},
		},
		"agent writes what is already there": {
			user: agent,
			old:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "a").Taint(quarantine, noSelect, t0).ClientConfig("https://api.gpu-east.example.com:6443", []byte("ca")).LeaseSeconds(60).Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "a").Taint(quarantine, noSelect, t0).ClientConfig("https://api.gpu-east.example.com:6443", []byte("ca")).LeaseSeconds(60).Obj(),
		},
		"an add-on agent adds a label": {
			user: addOnAgent,
			old:  apitest.MakeCluster("gpu-east").Accepted().Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Label("tenant", "b").Obj(),
			wantDenials: []string{agentMsg(addOnAgent.Username, `add label tenant="b" (metadata.labels): placements and cluster sets `+
				`select clusters by their labels, so a hub administrator sets them`)},
		},
		"an administrator edits spec and labels": {
			user: alice,
			old:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "a").Taint(quarantine, noSelect, t0).LeaseSeconds(60).Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Label("team", "b").ClientConfig("https://api.gpu-east.example.com:6443", []byte("ca")).LeaseSeconds(30).Obj(),
		},
		"agent creates its cluster with a hub taint": {
			user:        agent,
			cur:         apitest.MakeCluster("gpu-east").Taint(unreachable, noSelect, t0).Obj(),
			wantDenials: []string{taintMsg(agent.Username, "add", unreachable)},
		},
		"others may change the hub's taints": {
			user: alice,
			old:  apitest.MakeCluster("gpu-east").Accepted().Taint(unreachable, noSelect, t0).Obj(),
			cur:  apitest.MakeCluster("gpu-east").Accepted().Taint(unavailable, noSelect, t0).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sar := &fakeSAR{grants: map[string][]Permission{tc.user.Username: tc.grants}}
			got, err := ReviewManagedCluster(context.Background(), sar.can, tc.user, tc.old, tc.cur)
			if err != nil {
				t.Fatalf("ReviewManagedCluster() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantDenials, got); diff != "" {
				t.Errorf("denials (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAsked, sar.asked); diff != "" {
				t.Errorf("permissions asked (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviewBinding(t *testing.T) {
	cases := map[string]struct {
		grants      []Permission
		old, cur    *clusterv1beta2.ManagedClusterSetBinding
		wantDenials []string
		wantAsked   []Permission
	}{
		"create without bind": {
			cur: apitest.MakeClusterSetBinding("team-a", "red").Obj(),
			wantDenials: []string{`managedclustersetbindings "red" in namespace "team-a": binding set "red" (spec.clusterSet) needs ` +
				`permission to create managedclustersets/bind on "red" in group cluster.open-cluster-management.io; ` +
				`ask a hub administrator to bind a role with it`},
			wantAsked: []Permission{BindPermission("red")},
		},
		"create with bind": {
			grants:    []Permission{BindPermission("red")},
			cur:       apitest.MakeClusterSetBinding("team-a", "red").Obj(),
			wantAsked: []Permission{BindPermission("red")},
		},
		"bind on another set does not help": {
			grants: []Permission{BindPermission("blue")},
			cur:    apitest.MakeClusterSetBinding("team-a", "red").Obj(),
			wantDenials: []string{`managedclustersetbindings "red" in namespace "team-a": binding set "red" (spec.clusterSet) needs ` +
				`permission to create managedclustersets/bind on "red" in group cluster.open-cluster-management.io; ` +
				`ask a hub administrator to bind a role with it`},
			wantAsked: []Permission{BindPermission("red")},
		},
		"update keeping the set needs nothing": {
			old: apitest.MakeClusterSetBinding("team-a", "red").Obj(),
			cur: apitest.MakeClusterSetBinding("team-a", "red").Obj(),
		},
		"update changing the set needs bind on the new one": {
			grants:    []Permission{BindPermission("blue")},
			old:       apitest.MakeClusterSetBinding("team-a", "red").Obj(),
			cur:       &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "red", Namespace: "team-a"}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "blue"}},
			wantAsked: []Permission{BindPermission("blue")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sar := &fakeSAR{grants: map[string][]Permission{alice.Username: tc.grants}}
			got, err := ReviewBinding(context.Background(), sar.can, alice, tc.old, tc.cur)
			if err != nil {
				t.Fatalf("ReviewBinding() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantDenials, got); diff != "" {
				t.Errorf("denials (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAsked, sar.asked); diff != "" {
				t.Errorf("permissions asked (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviewAuthorizerFails(t *testing.T) {
	sar := &fakeSAR{err: errors.New("connection refused")}
	if _, err := ReviewManagedCluster(context.Background(), sar.can, alice, nil, apitest.MakeCluster("gpu-east").Accepted().Obj()); err == nil {
		t.Error("ReviewManagedCluster() with a failing authorizer: no error, want one (the webhook must not guess)")
	}
	if _, err := ReviewBinding(context.Background(), sar.can, alice, nil, apitest.MakeClusterSetBinding("team-a", "red").Obj()); err == nil {
		t.Error("ReviewBinding() with a failing authorizer: no error, want one")
	}
}
