//go:build integration

package registration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// specEdit is a write a compromised agent would make to its own ManagedCluster.
type specEdit struct {
	change func(*clusterv1.ManagedCluster)
	// refusal is what the webhook's refusal says, in part.
	refusal string
}

// agentSpecEdits are the four edits an agent must not make: each would make the hub trust what
// the spoke says about itself.
func agentSpecEdits(cluster, quarantine string) map[string]specEdit {
	agent := clusteridentity.User(cluster, "a1")
	prefix := fmt.Sprintf("managedclusters %q: the cluster's agent %s may not ", cluster, agent)
	return map[string]specEdit{
		"lift an administrator's quarantine taint": {
			change: func(mc *clusterv1.ManagedCluster) {
				mc.Spec.Taints = nil
			},
			refusal: prefix + "remove taint " + quarantine + " in spec.taints: taints other than the hub's are a hub " +
				"administrator's (a quarantine, a maintenance window), so keep the entries with that key as they are; " +
				"ask a hub administrator to make the change",
		},
		"label itself into another tenant's placements": {
			change: func(mc *clusterv1.ManagedCluster) { mc.Labels["tenant"] = "b" },
			refusal: prefix + `change label tenant from "a" to "b" (metadata.labels): placements and cluster sets select ` +
				"clusters by their labels, so a hub administrator sets them; ask a hub administrator to make the change",
		},
		"point the hub at another API server": {
			change: func(mc *clusterv1.ManagedCluster) {
				mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://attacker.example.com:6443", CABundle: []byte("ca")}}
			},
			refusal: prefix + "change spec.managedClusterClientConfigs: the hub trusts these addresses of the cluster's API " +
				"server (the Kueue controller connects to them), so they are set when the cluster registers; ask a hub " +
				"administrator to make the change",
		},
		"stretch its lease": {
			change: func(mc *clusterv1.ManagedCluster) { mc.Spec.LeaseDurationSeconds = 86400 },
			refusal: prefix + "change spec.leaseDurationSeconds from 60 to 86400: the hub judges the cluster unreachable " +
				"after 5 lease durations without a renewal; ask a hub administrator to make the change",
		},
	}
}

// TestAgentMayNotRewriteItsCluster plays a compromised agent of an accepted cluster, with a real
// certificate, against a hub with its webhook. The hub gives it the status of its ManagedCluster
// only, so RBAC refuses each edit of spec and labels; and where an administrator gave agents more
// (OCM's agent role grants update on the cluster), the webhook refuses each edit, saying which
// field and what to do instead.
func TestAgentMayNotRewriteItsCluster(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	ctx := context.Background()
	c := hubClient(t, env)
	env.DeleteWebhookConfigurationAtEnd(t) // after the hub stops, so the package's other tests can write
	startHubWith(t, env, func(o *hub.Options) { o.WebhookAddress = "127.0.0.1:0" })
	testenv.WaitFor(t, 30*time.Second, "the hub's webhook to answer", func(ctx context.Context) (bool, string, error) {
		err := c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "is reserved"), fmt.Sprintf("dry-run create: %v", err), nil
	})

	const name, quarantine = "spec-guard", "example.com/quarantine"
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tenant": "a"}},
		Spec: clusterv1.ManagedClusterSpec{
			ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://api.spec-guard.example.com:6443", CABundle: []byte("ca")}},
			LeaseDurationSeconds:        60,
			Taints:                      []clusterv1.Taint{{Key: quarantine, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: &metav1.Time{Time: time.Now()}}},
		},
	}
	if err := c.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), mc) })
	if _, err := hubreg.Accept(ctx, c, env.Hub.Client, name, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	ac, err := client.New(agentIdentity(t, env, name, "a1"), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// What the administrator set, which the agent's attempts must leave as it is. (The hub's own
	// taints come and go meanwhile: the test's agent renews no lease.)
	type adminSet struct {
		Tenant        string
		ClientConfigs []clusterv1.ClientConfig
		LeaseSeconds  int32
		Quarantined   bool
	}
	read := func() adminSet {
		got := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		return adminSet{
			Tenant: got.Labels["tenant"], ClientConfigs: got.Spec.ManagedClusterClientConfigs, LeaseSeconds: got.Spec.LeaseDurationSeconds,
			Quarantined: slices.ContainsFunc(got.Spec.Taints, func(tn clusterv1.Taint) bool { return tn.Key == quarantine }),
		}
	}
	before := read()
	update := func(ctx context.Context, obj client.Object) error { return ac.Update(ctx, obj) }
	updateStatus := func(ctx context.Context, obj client.Object) error { return ac.Status().Update(ctx, obj) }

	// The agent's own access: it reports status, once the hub has granted that.
	testenv.WaitFor(t, 30*time.Second, "the accepted agent to be allowed to write its cluster's status", func(ctx context.Context) (bool, string, error) {
		err := agentWrite(ctx, ac, name, func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
				Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "the test's agent",
			})
			// A status write carries the whole object: what it says of spec and labels is dropped.
			mc.Labels["tenant"], mc.Spec.LeaseDurationSeconds = "b", 86400
		}, updateStatus)
		return err == nil, fmt.Sprintf("status update: %v", err), nil
	})
	edits := agentSpecEdits(name, quarantine)
	for what, e := range edits {
		err := agentWrite(ctx, ac, name, e.change, update)
		if wantRBAC := `cannot update resource "managedclusters"`; err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), wantRBAC) {
			t.Errorf("the agent tried to %s with the hub's grants: err = %v, want RBAC's Forbidden (%s)", what, err, wantRBAC)
		}
	}

	// An administrator gives agents update on their cluster, as OCM's agent role does.
	grantGroup(t, env, clusteridentity.Group(name), rbacv1.PolicyRule{
		APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"},
		ResourceNames: []string{name}, Verbs: []string{"update", "patch"},
	})
	testenv.WaitFor(t, 30*time.Second, "RBAC to let the agent write its cluster", func(ctx context.Context) (bool, string, error) {
		err := agentWrite(ctx, ac, name, func(*clusterv1.ManagedCluster) {}, update)
		return err == nil, fmt.Sprintf("an update that changes nothing: %v", err), nil
	})
	for what, e := range edits {
		err := agentWrite(ctx, ac, name, e.change, update)
		switch {
		case err == nil:
			t.Errorf("the agent managed to %s", what)
		case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "admission webhook"):
			t.Errorf("the agent tried to %s: err = %v, want the webhook's refusal", what, err)
		case !strings.Contains(err.Error(), e.refusal):
			t.Errorf("the agent tried to %s: refused with\n  %v\nwant the message to hold\n  %s", what, err, e.refusal)
		}
	}
	// A merge patch is judged the same way.
	orig := &clusterv1.ManagedCluster{}
	if err := ac.Get(ctx, client.ObjectKey{Name: name}, orig); err != nil {
		t.Fatal(err)
	}
	patched := orig.DeepCopy()
	patched.Spec.LeaseDurationSeconds = 86400
	if err := ac.Patch(ctx, patched, client.MergeFrom(orig)); err == nil || !strings.Contains(err.Error(), edits["stretch its lease"].refusal) {
		t.Errorf("the agent patched its lease: err = %v, want the webhook's refusal", err)
	}

	if diff := cmp.Diff(before, read()); diff != "" {
		t.Errorf("what the administrator set, after the agent's attempts (-before +after):\n%s", diff)
	}
}

// agentWrite reads cluster with c, applies change and writes it with write, again on conflicts
// (the hub writes the cluster too).
func agentWrite(ctx context.Context, c client.Client, cluster string, change func(*clusterv1.ManagedCluster),
	write func(context.Context, client.Object) error) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		change(mc)
		return write(ctx, mc)
	})
}

// grantGroup gives group the rules cluster-wide until the test ends.
func grantGroup(t *testing.T, env *testenv.Env, group string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	rbac := env.Hub.Client.RbacV1()
	name := "test-grant-" + strings.ReplaceAll(group, ":", "-")
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}
