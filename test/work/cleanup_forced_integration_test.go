//go:build integration

package work

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/work"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// An agent that is gone cannot hold its cluster's namespace for ever: after the cleanup timeout
// the hub removes the works' finalizer itself and says so.
func TestDenialOfAGoneAgentIsForcedAfterTheTimeout(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1, CRDs: true})
	opts := testenv.TestHubOptions()
	opts.ClusterCleanupTimeout = 5 * time.Second
	env.StartHub(t, opts)
	joinedSpokes := env.JoinSpokes(t)
	j := &joined{Name: joinedSpokes[0].Name, Spoke: joinedSpokes[0].Spoke, Reg: joinedSpokes[0].Agent}
	dyn, err := dynamic.NewForConfig(j.Spoke.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	j.Dyn = dyn
	j.startWork(t, 2*time.Second)
	hub := env.HubClient(t)
	ctx := context.Background()

	createWork(t, hub, cleanupWorkload(t, j.Name))
	waitWork(t, hub, j.Name, "cleanup", "every manifest applied", allApplied)
	j.stopWork() // the agent is gone
	deny(t, hub, j.Name)
	waitHubNamespaceGone(t, hub, j.Name)
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: j.Name}, mc); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
	want := "the agent did not remove what 1 ManifestWork (cleanup) applied within 5s: the hub removed their finalizer " + workv1.ManifestWorkFinalizer
	if c == nil || c.Reason != hubreg.ReasonDenied || !strings.Contains(c.Message, want) {
		t.Errorf("HubAcceptedManagedCluster = %+v, want reason %s and a message containing %q", c, hubreg.ReasonDenied, want)
	}
	// What the work applied stays: nobody removed it. Remove it by hand, as the message says (the
	// spoke's garbage collector takes what the AppliedManifestWork owns).
	if _, err := j.Dyn.Resource(saGVR).Namespace("cleanup-app").Get(ctx, "worker", metav1.GetOptions{}); err != nil {
		t.Errorf("the ServiceAccount the work applied: %v, want it still on the spoke (the agent was gone)", err)
	}
	sc := spokeClient(t, j)
	if err := sc.Delete(ctx, &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: work.AppliedName(work.HubHash(env.Hub.RESTConfig().Host), "cleanup")}}); err != nil {
		t.Fatal(err)
	}
	waitSpokeCleaned(t, j)

	// Accepted again, the cluster works as before.
	if _, err := hubreg.Accept(ctx, hub, env.Hub.Client, j.Name, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAgentAccess(t, j.Reg, j.Name)
	j.startWork(t, 2*time.Second)
	createWork(t, hub, cleanupWorkload(t, j.Name))
	waitWork(t, hub, j.Name, "cleanup", "every manifest applied", allApplied)
	deleteWork(t, hub, j.Name, "cleanup")
	waitSpokeCleaned(t, j)
}
