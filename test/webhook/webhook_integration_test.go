//go:build integration

package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// editClusters lets a user write ManagedClusters, but grants none of the webhook's permissions.
var editClusters = rbacv1.PolicyRule{
	APIGroups: []string{webhook.ClusterGroup}, Resources: []string{"managedclusters"},
	Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
}

func subresource(group, resource, verb, name string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}, ResourceNames: []string{name}}
}

func cluster(name string, labels map[string]string, accepted bool) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted},
	}
}

func binding(ns, set string) *clusterv1beta2.ManagedClusterSetBinding {
	return &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}
}

func TestConfiguration(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	got, err := env.Hub.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), webhook.ConfigurationName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range got.Webhooks {
		names = append(names, w.Name)
		if len(w.ClientConfig.CABundle) == 0 || w.ClientConfig.URL == nil || w.ClientConfig.Service != nil {
			t.Fatalf("webhook %s: clientConfig %+v, want a URL and a CA bundle", w.Name, w.ClientConfig)
		}
		if u := *w.ClientConfig.URL; !strings.HasPrefix(u, "https://127.0.0.1:") || strings.HasPrefix(u, "https://127.0.0.1:0/") {
			t.Errorf("webhook %s: URL %s, want https://127.0.0.1:<the port picked>/...", w.Name, u)
		}
		if *w.FailurePolicy != admissionregistrationv1.Fail || *w.SideEffects != admissionregistrationv1.SideEffectClassNone {
			t.Errorf("webhook %s: failurePolicy %s, sideEffects %s, want Fail and None", w.Name, *w.FailurePolicy, *w.SideEffects)
		}
	}
	if want := []string{webhook.ManagedClusterWebhookName, webhook.BindingWebhookName, webhook.ManifestWorkWebhookName,
		webhook.ClaimsWebhookName, webhook.FederatedLearningWebhookName, webhook.ManagedServiceAccountWebhookName,
		webhook.PolicyWebhookName}; !slices.Equal(names, want) {
		t.Errorf("webhooks %v, want %v", names, want)
	}
	// The leader rewrites the configuration when what it reads back differs from what it wants:
	// the API server's defaults must not count as a difference.
	base := strings.TrimSuffix(*got.Webhooks[0].ClientConfig.URL, webhook.ManagedClusterPath)
	want := webhook.Configuration(webhook.Endpoint{URL: base}, got.Webhooks[0].ClientConfig.CABundle)
	if diff := cmp.Diff(want.Webhooks, got.Webhooks); diff != "" {
		t.Errorf("the configuration as the API server holds it differs from what the hub writes (-want +got):\n%s", diff)
	}
}

func TestAccept(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const user, name = "wh-accept-user", "wh-accept"
	grant(t, env, user, editClusters)
	c := as(t, env, user)

	mc := cluster(name, nil, false)
	eventually(t, "the user to create an unaccepted cluster", func(ctx context.Context) error { return c.Create(ctx, mc.DeepCopy()) })
	deleteAtEnd(t, admin(t, env), mc)

	want := `managedclusters "wh-accept": setting spec.hubAcceptsClient to true needs permission to update ` +
		`managedclusters/accept on "wh-accept" in group register.open-cluster-management.io; ask a hub ` +
		`administrator to bind a role with it, or run flotilla accept as one`
	denied(t, "accepting without permission", update(ctx, c, mc, func() { mc.Spec.HubAcceptsClient = true }), want)
	denied(t, "creating accepted without permission", c.Create(ctx, cluster("wh-accept-2", nil, true)),
		`managedclusters "wh-accept-2": setting spec.hubAcceptsClient to true needs permission to update managedclusters/accept on "wh-accept-2"`)

	grant(t, env, user, subresource(webhook.RegisterGroup, "managedclusters/accept", "update", name))
	eventually(t, "the user to accept the cluster with managedclusters/accept", func(ctx context.Context) error {
		return update(ctx, c, mc, func() { mc.Spec.HubAcceptsClient = true })
	})
	// Only a change to true needs the permission: a user without it may edit an accepted cluster.
	other := as(t, env, "wh-accept-other")
	grant(t, env, "wh-accept-other", editClusters)
	eventually(t, "another user to edit the accepted cluster", func(ctx context.Context) error {
		return update(ctx, other, mc, func() { mc.Spec.LeaseDurationSeconds = 30 })
	})
}

func TestJoin(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const user, name = "wh-join-user", "wh-join"
	grant(t, env, user, editClusters)
	c := as(t, env, user)

	mc := cluster(name, map[string]string{clusterv1beta2.ClusterSetLabel: "wh-red"}, false)
	deleteAtEnd(t, admin(t, env), mc)
	// Wait for RBAC first: until the user may create clusters, the refusal is RBAC's.
	eventually(t, "the user to create a cluster without a set", func(ctx context.Context) error {
		return c.Create(ctx, cluster("wh-join-bare", map[string]string{clusterv1beta2.ClusterSetLabel: ""}, false))
	})
	deleteAtEnd(t, admin(t, env), cluster("wh-join-bare", nil, false))
	denied(t, "creating a cluster in a set without join", c.Create(ctx, mc.DeepCopy()),
		`managedclusters "wh-join": setting label cluster.open-cluster-management.io/clusterset to "wh-red" (joining set "wh-red") `+
			`needs permission to create managedclustersets/join on "wh-red" in group cluster.open-cluster-management.io; `+
			`ask a hub administrator to bind a role with it`)

	grant(t, env, user, subresource(webhook.ClusterGroup, "managedclustersets/join", "create", "wh-red"))
	eventually(t, "the user to create the cluster in wh-red with join", func(ctx context.Context) error { return c.Create(ctx, mc.DeepCopy()) })

	move := func() { mc.Labels[clusterv1beta2.ClusterSetLabel] = "wh-blue" }
	denied(t, "moving the cluster to a set without join", update(ctx, c, mc, move),
		`managedclusters "wh-join": changing label cluster.open-cluster-management.io/clusterset from "wh-red" to "wh-blue" `+
			`(joining set "wh-blue") needs permission to create managedclustersets/join on "wh-blue"`)
	grant(t, env, user, subresource(webhook.ClusterGroup, "managedclustersets/join", "create", "wh-blue"))
	eventually(t, "the user to move the cluster with join on both sets", func(ctx context.Context) error { return update(ctx, c, mc, move) })

	// Leaving a set needs join on it too.
	other := as(t, env, "wh-join-other")
	grant(t, env, "wh-join-other", editClusters, subresource(webhook.ClusterGroup, "managedclustersets/join", "create", "wh-green"))
	eventually(t, "RBAC for the second user", func(ctx context.Context) error { return other.Get(ctx, client.ObjectKeyFromObject(mc), mc) })
	denied(t, "moving the cluster out of a set without join on it", update(ctx, other, mc, func() { mc.Labels[clusterv1beta2.ClusterSetLabel] = "wh-green" }),
		`managedclusters "wh-join": changing label cluster.open-cluster-management.io/clusterset from "wh-blue" to "wh-green" `+
			`(leaving set "wh-blue") needs permission to create managedclustersets/join on "wh-blue"`)
}

func TestBind(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub)
	const user = "wh-bind-user"
	grant(t, env, user, rbacv1.PolicyRule{
		APIGroups: []string{webhook.ClusterGroup}, Resources: []string{"managedclustersetbindings"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	})
	c := as(t, env, user)
	eventually(t, "RBAC for the user", func(ctx context.Context) error {
		return c.List(ctx, &clusterv1beta2.ManagedClusterSetBindingList{}, client.InNamespace(ns))
	})

	denied(t, "binding a set without bind", c.Create(ctx, binding(ns, "wh-red")),
		fmt.Sprintf(`managedclustersetbindings "wh-red" in namespace %q: binding set "wh-red" (spec.clusterSet) needs `+
			`permission to create managedclustersets/bind on "wh-red" in group cluster.open-cluster-management.io; `+
			`ask a hub administrator to bind a role with it`, ns))
	grant(t, env, user, subresource(webhook.ClusterGroup, "managedclustersets/bind", "create", "wh-red"))
	eventually(t, "the user to bind wh-red with bind", func(ctx context.Context) error { return c.Create(ctx, binding(ns, "wh-red")) })
	denied(t, "binding another set", c.Create(ctx, binding(ns, "wh-blue")), `needs permission to create managedclustersets/bind on "wh-blue"`)
}

func TestAgentTaints(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const name = "wh-agent"
	adm := admin(t, env)
	mc := cluster(name, nil, true)
	if err := adm.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, adm, mc)
	// The agent never reported, so the hub taints the cluster unreachable.
	testenv.WaitFor(t, wait, "the hub to taint the cluster unreachable", func(ctx context.Context) (bool, string, error) {
		err := adm.Get(ctx, client.ObjectKeyFromObject(mc), mc)
		return hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable), fmt.Sprintf("taints %v", mc.Spec.Taints), err
	})

	agentUser := clusteridentity.User(name, "agent-1")
	agent := as(t, env, agentUser, clusteridentity.Groups(name)...)
	// The hub grants the agent only the status of its cluster; an administrator may grant it more,
	// as OCM's agent role does (update on the cluster), and the webhook still holds.
	grant(t, env, agentUser, subresource(webhook.ClusterGroup, "managedclusters", "update", name))
	got := mc.DeepCopy()
	eventually(t, "the agent to be allowed to write its cluster", func(ctx context.Context) error {
		return update(ctx, agent, got, func() {})
	})

	denied(t, "the agent removing the unreachable taint", update(ctx, agent, got, func() {
		got.Spec.Taints = slices.DeleteFunc(got.Spec.Taints, func(tn clusterv1.Taint) bool { return tn.Key == clusterv1.ManagedClusterTaintUnreachable })
	}), `managedclusters "wh-agent": the cluster's agent system:open-cluster-management:wh-agent:agent-1 may not remove taint `+
		`cluster.open-cluster-management.io/unreachable in spec.taints`)
	denied(t, "the agent adding the unavailable taint", update(ctx, agent, got, func() {
		got.Spec.Taints = append(got.Spec.Taints, clusterv1.Taint{Key: clusterv1.ManagedClusterTaintUnavailable, Effect: clusterv1.TaintEffectNoSelect})
	}), `may not add taint cluster.open-cluster-management.io/unavailable`)
	denied(t, "the agent adding a taint of its own", update(ctx, agent, got, func() {
		got.Spec.Taints = append(got.Spec.Taints, clusterv1.Taint{Key: "gpu.flotilla.io/maintenance", Effect: clusterv1.TaintEffectPreferNoSelect})
	}), `may not add taint gpu.flotilla.io/maintenance in spec.taints: taints other than the hub's are a hub administrator's`)
}

func TestAdminMayDoAll(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	adm := admin(t, env)
	ns := env.Namespace(t, env.Hub)

	mc := cluster("wh-admin", map[string]string{clusterv1beta2.ClusterSetLabel: "wh-gold"}, true)
	if err := adm.Create(ctx, mc); err != nil {
		t.Fatalf("creating an accepted cluster in a set: %v", err)
	}
	deleteAtEnd(t, adm, mc)
	if err := update(ctx, adm, mc, func() { mc.Labels[clusterv1beta2.ClusterSetLabel] = "wh-silver" }); err != nil {
		t.Errorf("moving the cluster to another set: %v", err)
	}
	if err := adm.Create(ctx, binding(ns, "wh-silver")); err != nil {
		t.Errorf("binding a set: %v", err)
	}
	testenv.WaitFor(t, wait, "the hub to taint the cluster unreachable", func(ctx context.Context) (bool, string, error) {
		err := adm.Get(ctx, client.ObjectKeyFromObject(mc), mc)
		return hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable), fmt.Sprintf("taints %v", mc.Spec.Taints), err
	})
	if err := update(ctx, adm, mc, func() { mc.Spec.Taints = nil }); err != nil {
		t.Errorf("removing the hub's taints: %v", err)
	}
}

func hasTaint(mc *clusterv1.ManagedCluster, key string) bool {
	return slices.ContainsFunc(mc.Spec.Taints, func(tn clusterv1.Taint) bool { return tn.Key == key })
}
