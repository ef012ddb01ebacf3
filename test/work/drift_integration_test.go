//go:build integration

package work

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// testDrift: the resync of a work the agent has applied reads from the spoke API server's cache
// and writes nothing while the spoke is as the work says; a change made on the spoke is put
// back, and a deleted object made again, within a resync or two (2 s in these tests).
func testDrift(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	spokeNamespace(t, one.Spoke.Client, "drift")
	createWork(t, hub, newWork(one.Name, "drift", manifests(t, configMap("drift", "c", map[string]string{"k": "work"}))))
	waitWork(t, hub, one.Name, "drift", "applied", allApplied)

	ours := func(reqs []string) []string {
		var out []string
		for _, r := range reqs {
			if strings.Contains(r, "/namespaces/drift/") || strings.Contains(r, appliedName(env.env, "drift")) {
				out = append(out, r)
			}
		}
		return out
	}
	time.Sleep(time.Second) // the rounds the create itself started are done
	reads, writes := len(one.writes.FreshReads()), len(one.writes.Requests())
	time.Sleep(5 * time.Second) // two resyncs
	if got := ours(one.writes.FreshReads()[reads:]); len(got) > 0 {
		t.Errorf("resyncs of an unchanged work read past the API server's cache: %v", got)
	}
	if got := ours(one.writes.Requests()[writes:]); len(got) > 0 {
		t.Errorf("resyncs of an unchanged work wrote: %v", got)
	}

	cms := one.Spoke.Client.CoreV1().ConfigMaps("drift")
	cm, err := cms.Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "changed on the spoke"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 15*time.Second, "the agent to put the ConfigMap back as the work says", func(ctx context.Context) (bool, string, error) {
		cm, err := cms.Get(ctx, "c", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return cm.Data["k"] == "work", "k = " + cm.Data["k"], nil
	})

	if err := cms.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 15*time.Second, "the agent to make the deleted ConfigMap again", func(ctx context.Context) (bool, string, error) {
		_, err := cms.Get(ctx, "c", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not found", nil
		}
		return err == nil, "", err
	})
	deleteWork(t, hub, one.Name, "drift")
}
