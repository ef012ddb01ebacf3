//go:build integration

package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// writeStatus reads cluster with c, applies change to it and writes its status, again on
// conflicts (the hub writes the cluster's status too).
func writeStatus(ctx context.Context, c client.Client, cluster string, change func(*clusterv1.ManagedCluster)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		change(mc)
		return c.Status().Update(ctx, mc)
	})
}

func setClaim(name, value string) func(*clusterv1.ManagedCluster) {
	return func(mc *clusterv1.ManagedCluster) {
		for i := range mc.Status.ClusterClaims {
			if mc.Status.ClusterClaims[i].Name == name {
				mc.Status.ClusterClaims[i].Value = value
				return
			}
		}
		mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	}
}

// TestClaimsOnlyFromTheClusterAgent: a ManagedCluster's status.clusterClaims change only when its
// own agent writes them. An administrator (system:masters), another cluster's agent and an
// add-on's agent on the cluster, each allowed by RBAC to write the status, are refused with the
// webhook's message, by update and by merge patch; a status write that leaves the claims alone
// goes through.
func TestClaimsOnlyFromTheClusterAgent(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const name, data = "wh-claims", "federated-learning-sample.client-data"
	adm := admin(t, env)
	mc := cluster(name, nil, true)
	if err := adm.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, adm, mc)

	writesStatus := rbacv1.PolicyRule{
		APIGroups: []string{webhook.ClusterGroup}, Resources: []string{"managedclusters", "managedclusters/status"},
		Verbs: []string{"get", "update", "patch"},
	}
	agentUser := clusteridentity.User(name, "a1")
	agent := as(t, env, agentUser, clusteridentity.Groups(name)...)
	grant(t, env, agentUser, writesStatus)
	otherUser := clusteridentity.User("wh-claims-other", "a1")
	other := as(t, env, otherUser, clusteridentity.Groups("wh-claims-other")...)
	grant(t, env, otherUser, writesStatus)
	addOnUser := clusteridentity.AddOnUser(name, "scorer", "a1")
	addOn := as(t, env, addOnUser, clusteridentity.AddOnGroups(name, "scorer")...)
	grant(t, env, addOnUser, writesStatus)

	// The agent reports what the cluster's ClusterClaims say.
	eventually(t, "the agent to report its claims", func(ctx context.Context) error {
		return writeStatus(ctx, agent, name, func(mc *clusterv1.ManagedCluster) {
			mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region.open-cluster-management.io", Value: "eu"}, {Name: data, Value: "/data/mnist"}}
		})
	})
	reported := func() []clusterv1.ManagedClusterClaim {
		got := &clusterv1.ManagedCluster{}
		if err := adm.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		return got.Status.ClusterClaims
	}
	want := reported()
	if len(want) != 2 {
		t.Fatalf("claims after the agent's report: %v, want its two", want)
	}
	// RBAC lets the others write the status: a write that leaves the claims alone shows it.
	for who, c := range map[string]client.Client{"administrator": adm, "other agent": other, "add-on agent": addOn} {
		eventually(t, "the "+who+" to write a condition", func(ctx context.Context) error {
			return writeStatus(ctx, c, name, func(mc *clusterv1.ManagedCluster) {
				meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
					Type: "example.com/Checked", Status: metav1.ConditionTrue, Reason: "Test", Message: "by the " + who,
				})
			})
		})
	}

	refusal := func(user, whose, change string) string {
		return fmt.Sprintf(`managedclusters %q: status.clusterClaims is reported by the cluster's own agent only (from the `+
			`ClusterClaims on the cluster), and %s is not that agent%s; this write would %s; create, change or delete the `+
			`ClusterClaim on cluster %s instead, and its agent reports it`, name, user, whose, change, name)
	}
	pointElsewhere := `change claim ` + data + ` from "/data/mnist" to "/etc"`
	denied(t, "the administrator changing the data claim", writeStatus(ctx, adm, name, setClaim(data, "/etc")),
		refusal("flotilla-admin", "", pointElsewhere))
	denied(t, "the administrator adding a claim", writeStatus(ctx, adm, name, setClaim("gpu.example.com", "a100")),
		refusal("flotilla-admin", "", `add claim gpu.example.com="a100"`))
	denied(t, "the administrator removing the claims", writeStatus(ctx, adm, name, func(mc *clusterv1.ManagedCluster) { mc.Status.ClusterClaims = nil }),
		refusal("flotilla-admin", "", "remove claim region.open-cluster-management.io, remove claim "+data))
	denied(t, "another cluster's agent changing the data claim", writeStatus(ctx, other, name, setClaim(data, "/etc")),
		refusal(otherUser, " (it is cluster wh-claims-other's)", pointElsewhere))
	denied(t, "an add-on's agent changing the data claim", writeStatus(ctx, addOn, name, setClaim(data, "/etc")),
		refusal(addOnUser, " (it is add-on scorer's agent on cluster wh-claims)", pointElsewhere))
	// A merge patch is judged the same way.
	orig := &clusterv1.ManagedCluster{}
	if err := adm.Get(ctx, client.ObjectKey{Name: name}, orig); err != nil {
		t.Fatal(err)
	}
	patched := orig.DeepCopy()
	setClaim(data, "/etc")(patched)
	denied(t, "the administrator patching the data claim", adm.Status().Patch(ctx, patched, client.MergeFrom(orig)),
		refusal("flotilla-admin", "", pointElsewhere))

	if diff := cmp.Diff(want, reported()); diff != "" {
		t.Errorf("claims after the refused writes (-agent's report +now):\n%s", diff)
	}
	// The agent still may.
	if err := writeStatus(ctx, agent, name, setClaim(data, "/data/cifar")); err != nil {
		t.Errorf("the agent changing its own claim: %v", err)
	}
}

// TestClaimsWithoutAHub: the configuration outlives a stopped hub. A status write that leaves
// the claims alone still goes through, since the API server does not call the webhook for it;
// one that changes them, even the cluster's own agent's, is refused until a hub answers
// (failure policy Fail).
func TestClaimsWithoutAHub(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	deleteConfigurationAtEnd(t, env)
	opts := hub.DefaultOptions()
	opts.LeaderElection, opts.HealthProbeAddress, opts.MetricsAddress = false, "0", "0"
	opts.SkipNameValidation = true
	opts.WebhookAddress = "127.0.0.1:0"
	r := startReplica(t, env.HubIdentity(t, ""), opts)
	waitForWebhook(t, env)
	ctx := context.Background()
	const name = "wh-claims-nohub"
	adm := admin(t, env)
	// Not accepted, so that the hub puts no finalizer on it and the test can delete it hubless.
	mc := cluster(name, nil, false)
	if err := adm.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, adm, mc)
	agentUser := clusteridentity.User(name, "a1")
	agent := as(t, env, agentUser, clusteridentity.Groups(name)...)
	grant(t, env, agentUser, rbacv1.PolicyRule{
		APIGroups: []string{webhook.ClusterGroup}, Resources: []string{"managedclusters", "managedclusters/status"}, Verbs: []string{"get", "update"},
	})
	eventually(t, "the agent to report a claim while the hub runs", func(ctx context.Context) error {
		return writeStatus(ctx, agent, name, setClaim("region.open-cluster-management.io", "eu"))
	})
	r.stop()

	if err := writeStatus(ctx, adm, name, func(mc *clusterv1.ManagedCluster) {
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: "example.com/Checked", Status: metav1.ConditionTrue, Reason: "Test"})
	}); err != nil {
		t.Errorf("a status write that leaves the claims alone, with no hub: %v; want it to go through", err)
	}
	err := writeStatus(ctx, agent, name, setClaim("region.open-cluster-management.io", "us"))
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "`+webhook.ClaimsWebhookName+`"`) {
		t.Errorf("the agent changing a claim with no hub: %v; want the API server's refusal for a webhook that does not answer", err)
	}
}
