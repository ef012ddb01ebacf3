//go:build integration

package webhook

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestFailoverAnnotationsOnlyFromTheHub: a ManagedCluster's failover.flotilla.io/* annotations
// (timing, epoch, lost-at) are the hub's. A user who may update ManagedClusters, an
// administrator (system:masters) and the cluster's own agent, given update on its cluster, are
// refused when they add, change or remove one; the hub, running as its own service account,
// writes them (its FailoverPolicy controller the timing, and its identity the epoch).
func TestFailoverAnnotationsOnlyFromTheHub(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	deleteConfigurationAtEnd(t, env)
	hubCfg := env.HubIdentity(t, "")
	opts := hub.DefaultOptions()
	opts.LeaderElection, opts.HealthProbeAddress, opts.MetricsAddress = false, "0", "0"
	opts.SkipNameValidation = true
	opts.WebhookAddress = "127.0.0.1:0"
	startReplica(t, hubCfg, opts)
	waitForWebhook(t, env)
	ctx := context.Background()
	const name, set = "wh-fence", "wh-fence-set"
	adm := admin(t, env)

	s := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}, Spec: clusterv1beta2.ManagedClusterSetSpec{
		ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}}
	if err := adm.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, adm, s)
	mc := cluster(name, map[string]string{clusterv1beta2.ClusterSetLabel: set}, true)
	if err := adm.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, adm, mc)
	p := &failoverv1alpha1.FailoverPolicy{ObjectMeta: metav1.ObjectMeta{Name: "wh-fence"},
		Spec: failoverv1alpha1.FailoverPolicySpec{ClusterSet: set, LeaseDurationSeconds: 5, FenceAfterSeconds: 20, LostAfterSeconds: 30}}
	if err := adm.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, adm, p)
	timing := fencing.Timing{Lease: 5e9, FenceAfter: 20e9, LostAfter: 30e9}.String()
	testenv.WaitFor(t, wait, "the hub to write the policy's timing on the cluster", func(ctx context.Context) (bool, string, error) {
		err := adm.Get(ctx, client.ObjectKeyFromObject(mc), mc)
		return mc.Annotations[fencing.AnnotationTiming] == timing, fmt.Sprintf("annotations %v", mc.Annotations), err
	})

	// The hub's own identity raises the epoch, as its lease controller does at a declared loss.
	hubClient, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := update(ctx, hubClient, mc.DeepCopy(), func() {}); err != nil {
		t.Fatalf("the hub reading and writing its cluster: %v", err)
	}
	raised := mc.DeepCopy()
	if err := update(ctx, hubClient, raised, func() {
		raised.Annotations[fencing.AnnotationEpoch] = "1"
		raised.Annotations[fencing.AnnotationLostAt] = "2026-12-05T10:00:00Z"
	}); err != nil {
		t.Fatalf("the hub raising the epoch: %v", err)
	}

	const user = "wh-fence-user"
	grant(t, env, user, editClusters)
	c := as(t, env, user)
	eventually(t, "RBAC for the user", func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKeyFromObject(mc), &clusterv1.ManagedCluster{})
	})
	agentUser := clusteridentity.User(name, "agent-1")
	agent := as(t, env, agentUser, clusteridentity.Groups(name)...)
	grant(t, env, agentUser, subresource(webhook.ClusterGroup, "managedclusters", "update", name), subresource(webhook.ClusterGroup, "managedclusters", "get", name))
	eventually(t, "RBAC for the agent", func(ctx context.Context) error {
		return agent.Get(ctx, client.ObjectKeyFromObject(mc), &clusterv1.ManagedCluster{})
	})

	refused := fmt.Sprintf(`managedclusters %q: the annotations failover.flotilla.io/* are the hub's (user system:serviceaccount:`, name)
	for what, tc := range map[string]struct {
		c      client.Client
		change func(*clusterv1.ManagedCluster)
		want   string
	}{
		"a user setting the epoch and lost-at": {c: c, change: func(mc *clusterv1.ManagedCluster) {
			mc.Annotations[fencing.AnnotationEpoch] = "7"
			mc.Annotations[fencing.AnnotationLostAt] = "2026-12-05T11:00:00Z"
		}, want: `wh-fence-user is not the hub, and this write would change failover.flotilla.io/epoch from "1" to "7", ` +
			`change failover.flotilla.io/lost-at from "2026-12-05T10:00:00Z" to "2026-12-05T11:00:00Z"`},
		"a user removing the timing": {c: c, change: func(mc *clusterv1.ManagedCluster) {
			delete(mc.Annotations, fencing.AnnotationTiming)
		}, want: `this write would remove failover.flotilla.io/timing="` + timing + `"`},
		"an administrator stretching the timing": {c: adm, change: func(mc *clusterv1.ManagedCluster) {
			mc.Annotations[fencing.AnnotationTiming] = "lease=1h0m0s fence=2h0m0s lost=3h0m5s"
		}, want: `change failover.flotilla.io/timing from "` + timing + `" to "lease=1h0m0s fence=2h0m0s lost=3h0m5s"`},
		// The record of requeued workloads is what a loss's timeline shows (the dashboard, describe
		// cluster): a forged one would name workloads the loss never moved.
		"the cluster's agent planting a record of requeued workloads": {c: agent, change: func(mc *clusterv1.ManagedCluster) {
			mc.Annotations[fencing.AnnotationRequeued] = `{"epoch":1,"workloads":["team/forged"]}`
		}, want: agentUser + ` is not the hub, and this write would add failover.flotilla.io/requeued="{\"epoch\":1,\"workloads\":[\"team/forged\"]}"`},
		"the cluster's agent lowering its epoch": {c: agent, change: func(mc *clusterv1.ManagedCluster) {
			mc.Annotations[fencing.AnnotationEpoch] = "0"
		}, want: agentUser + ` is not the hub, and this write would change failover.flotilla.io/epoch from "1" to "0"`},
	} {
		got := mc.DeepCopy()
		err := update(ctx, tc.c, got, func() { tc.change(got) })
		denied(t, what, err, refused)
		denied(t, what, err, tc.want)
	}
	// By merge patch too, and on create.
	patched := mc.DeepCopy()
	if err := adm.Get(ctx, client.ObjectKeyFromObject(mc), patched); err != nil {
		t.Fatal(err)
	}
	before := patched.DeepCopy()
	patched.Annotations[fencing.AnnotationEpoch] = "0"
	denied(t, "a user's merge patch of the epoch", c.Patch(ctx, patched, client.MergeFrom(before)), `change failover.flotilla.io/epoch from "1" to "0"`)
	planted := cluster("wh-fence-planted", nil, false)
	planted.Annotations = map[string]string{fencing.AnnotationEpoch: "3"}
	denied(t, "a user creating a cluster with an epoch", c.Create(ctx, planted), `add failover.flotilla.io/epoch="3"`)

	// Other annotations stay the users'.
	if err := update(ctx, c, mc.DeepCopy(), func() {}); err != nil {
		t.Errorf("a user's write that keeps the hub's annotations: %v", err)
	}
	other := mc.DeepCopy()
	if err := update(ctx, c, other, func() { other.Annotations["example.com/owner"] = "team-a" }); err != nil {
		t.Errorf("a user adding an annotation of their own: %v", err)
	}
	final := &clusterv1.ManagedCluster{}
	if err := adm.Get(ctx, client.ObjectKeyFromObject(mc), final); err != nil {
		t.Fatal(err)
	}
	if got := final.Annotations[fencing.AnnotationEpoch]; got != "1" {
		t.Errorf("epoch %q after the refusals, want the hub's 1", got)
	}
}
