//go:build integration

package registration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestClaimsAreTheClustersOwnWord runs a real agent against a hub with its webhook: the agent
// reports the spoke's ClusterClaims, and follows a change of one, through the webhook. Another
// cluster's agent, with a real certificate and a role an administrator gave every agent's
// status, and the administrator are refused when they change the claim, so a FederatedLearning
// selecting clusters by it never gets a path someone else wrote.
func TestClaimsAreTheClustersOwnWord(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 3, CRDs: true})
	ctx := context.Background()
	c := hubClient(t, env)
	env.DeleteWebhookConfigurationAtEnd(t) // after the hub stops, so the package's other tests can write
	startHubWith(t, env, func(o *hub.Options) { o.WebhookAddress = "127.0.0.1:0" })
	testenv.WaitFor(t, 30*time.Second, "the hub's webhook to answer", func(ctx context.Context) (bool, string, error) {
		err := c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "is reserved"), fmt.Sprintf("dry-run create: %v", err), nil
	})

	const cluster, attacker, claim = "claims-victim", "claims-attacker", "data.flotilla.test"
	spoke := env.Spokes[2]
	sc, err := client.New(spoke.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cc := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: claim}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "/data/mnist"}}
	if err := sc.Create(ctx, cc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Delete(context.Background(), cc) })
	runAgent(t, agentreg.Options{
		ClusterName: cluster, AgentID: "agent-c", Bootstrap: bootstrapConfig(t, env), Spoke: spoke.RESTConfig(),
		Namespace: env.Namespace(t, spoke), LeaseDurationSeconds: 1, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
	})
	testenv.WaitFor(t, 30*time.Second, "a certificate request from the agent", func(context.Context) (bool, string, error) {
		n := len(clusterCSRs(t, env, cluster))
		return n == 1, fmt.Sprintf("%d requests", n), nil
	})
	if _, err := hubreg.Accept(ctx, c, env.Hub.Client, cluster, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}})
	})
	claimOnHub := func() string {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return "error: " + err.Error()
		}
		for _, cl := range mc.Status.ClusterClaims {
			if cl.Name == claim {
				return cl.Value
			}
		}
		return ""
	}
	testenv.WaitFor(t, 60*time.Second, "the agent to report the claim", func(context.Context) (bool, string, error) {
		v := claimOnHub()
		return v == "/data/mnist", "claim " + v, nil
	})

	// An administrator gave every agent update on every cluster's status (too broad, but RBAC
	// would allow it); the webhook still holds.
	grantGroup(t, env, clusteridentity.ManagedClustersGroup, rbacv1.PolicyRule{
		APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters", "managedclusters/status"},
		Verbs: []string{"get", "update"},
	})
	ac, err := client.New(agentIdentity(t, env, attacker, "a1"), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	pointElsewhere := func(mc *clusterv1.ManagedCluster) {
		for i := range mc.Status.ClusterClaims {
			if mc.Status.ClusterClaims[i].Name == claim {
				mc.Status.ClusterClaims[i].Value = "/etc"
			}
		}
	}
	writeClaim := func(ctx context.Context, c client.Client) error {
		return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return err
			}
			pointElsewhere(mc)
			return c.Status().Update(ctx, mc)
		})
	}
	want := fmt.Sprintf(`status.clusterClaims is reported by the cluster's own agent only (from the ClusterClaims on the cluster), `+
		`and %s is not that agent (it is cluster %s's); this write would change claim %s from "/data/mnist" to "/etc"; `+
		`create, change or delete the ClusterClaim on cluster %s instead`, clusteridentity.User(attacker, "a1"), attacker, claim, cluster)
	var last error
	testenv.WaitFor(t, 30*time.Second, "RBAC to let the other agent write the status, and the webhook to refuse it", func(ctx context.Context) (bool, string, error) {
		last = writeClaim(ctx, ac)
		// Until the grant reaches the authorizer, the refusal is RBAC's.
		return last == nil || strings.Contains(last.Error(), "admission webhook"), fmt.Sprintf("%v", last), nil
	})
	if last == nil || !apierrors.IsForbidden(last) || !strings.Contains(last.Error(), want) {
		t.Errorf("another cluster's agent pointing the claim elsewhere: %v; want the webhook's refusal holding\n  %s", last, want)
	}
	if err := writeClaim(ctx, c); err == nil || !strings.Contains(err.Error(), "status.clusterClaims is reported by the cluster's own agent only") {
		t.Errorf("the administrator pointing the claim elsewhere: %v; want the webhook's refusal", err)
	}
	if v := claimOnHub(); v != "/data/mnist" {
		t.Errorf("claim %s on the hub after the refused writes = %q, want the agent's /data/mnist", claim, v)
	}

	// The cluster changes its claim; its agent reports the change.
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := sc.Get(ctx, client.ObjectKeyFromObject(cc), cc); err != nil {
			return err
		}
		cc.Spec.Value = "/data/cifar"
		return sc.Update(ctx, cc)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "the agent to report the changed claim", func(context.Context) (bool, string, error) {
		v := claimOnHub()
		return v == "/data/cifar", "claim " + v, nil
	})
}
