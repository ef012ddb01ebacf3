//go:build integration

package work

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// spokeVersions returns the resourceVersion of every ConfigMap and Deployment in the namespaces,
// and of every AppliedManifestWork, on a spoke.
func spokeVersions(t *testing.T, j *joined, namespaces ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, ns := range namespaces {
		cms, err := j.Spoke.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cms.Items {
			out["configmap "+ns+"/"+c.Name] = c.ResourceVersion
		}
		ds, err := j.Spoke.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds.Items {
			out["deployment "+ns+"/"+d.Name] = d.ResourceVersion
		}
	}
	amws := &workv1.AppliedManifestWorkList{}
	if err := spokeClient(t, j).List(ctx, amws); err != nil {
		t.Fatal(err)
	}
	for _, a := range amws.Items {
		out["appliedmanifestwork "+a.Spec.ManifestWorkName] = a.ResourceVersion
	}
	return out
}

// testHubOutage: with the hub's API server down, the agent keeps the spoke as it is (no write, no
// deletion); once it is back, a change of a work reaches the spoke.
func testHubOutage(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	before := spokeVersions(t, one, "app", "del")
	writes := len(one.writes.Requests())
	env.env.Hub.StopAPIServer()
	time.Sleep(6 * time.Second) // three resyncs without the hub
	if diff := cmp.Diff(before, spokeVersions(t, one, "app", "del")); diff != "" {
		t.Errorf("the spoke changed while the hub was down (-before +during):\n%s", diff)
	}
	if got := one.writes.Requests()[writes:]; len(got) > 0 {
		t.Errorf("the agent wrote to the spoke while the hub was down: %v", got)
	}
	if err := env.env.Hub.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: "del-b"}}
	update(t, hub, w, func() {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, manifests(t, configMap("del", "after-outage", nil))...)
	})
	waitWork(t, hub, one.Name, "del-b", "applied after the hub came back", allApplied)
	if _, err := getCM(t, one, "del", "after-outage"); err != nil {
		t.Errorf("the ConfigMap added after the outage: %v", err)
	}
}

// testSpokeOutage: a change made while the spoke's API server is down reaches it once it is back,
// and the status recovers, although this agent resyncs only once an hour (after the watch test).
func testSpokeOutage(t *testing.T, env *testEnv) {
	two, hub, ctx := env.clusters[1], env.hub, context.Background()
	// No watch on the spoke for this work: only the agent's retries can catch up.
	spokeNamespace(t, two.Spoke.Client, "outage")
	createWork(t, hub, newWork(two.Name, "outage", manifests(t, configMap("outage", "c", map[string]string{"a": "1"}))))
	waitWork(t, hub, two.Name, "outage", "applied", allApplied)
	two.Spoke.StopAPIServer()
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: two.Name, Name: "outage"}}
	update(t, hub, w, func() {
		w.Spec.Workload.Manifests = manifests(t, configMap("outage", "c", map[string]string{"a": "2"}))
	})
	time.Sleep(3 * time.Second) // the agent tries, and fails, meanwhile
	if err := two.Spoke.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	waitWork(t, hub, two.Name, "outage", "applied after the spoke came back", allApplied)
	if got := cmData(t, two, "outage", "c")["a"]; got != "2" {
		t.Errorf("ConfigMap data a = %q after the spoke came back, want 2", got)
	}
}
