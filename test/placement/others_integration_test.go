//go:build integration

package placement

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestNeverTouchesOthersDecisions: PlacementDecisions that carry a placement's label but that the
// placement does not control (someone else made them) are never rewritten or deleted by the hub,
// neither as surplus slices nor when their name is the one the placement needs.
func TestNeverTouchesOthersDecisions(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-others")
	f.Cluster(t, "pl-others-1", map[string]string{"env": "prod"})
	foreign := func(name, placement string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: name,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: placement}}}
		testenv.Create(t, c, d)
		return d
	}
	// Looks like a surplus slice of placement "others", which needs one slice only.
	surplus := foreign("others-decision-2", "others")
	// Holds the name placement "taken" needs for its first slice.
	taken := foreign("taken-decision-1", "taken")
	versions := map[string]string{surplus.Name: surplus.ResourceVersion, taken.Name: taken.ResourceVersion}

	testenv.Create(t, c, labelPlacement(f.Namespace, "others", 1, map[string]string{"env": "prod"}))
	testenv.Create(t, c, labelPlacement(f.Namespace, "taken", 1, map[string]string{"env": "prod"}))
	waitDecisions(t, c, f.Namespace, "others", decisionView{
		"others-decision-1": {Labels: labels("others", "", 0), Clusters: []string{"pl-others-1"}},
		"others-decision-2": {Labels: map[string]string{clusterv1beta1.PlacementLabel: "others"}, Clusters: []string{}},
	})
	time.Sleep(3 * time.Second) // the hub has had every chance to retry "taken"
	for _, d := range []*clusterv1beta1.PlacementDecision{surplus, taken} {
		got := &clusterv1beta1.PlacementDecision{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(d), got); err != nil {
			t.Errorf("PlacementDecision %s made by someone else: %v; want it left alone", d.Name, err)
			continue
		}
		if got.ResourceVersion != versions[d.Name] || len(got.OwnerReferences) > 0 || len(got.Status.Decisions) > 0 {
			t.Errorf("PlacementDecision %s made by someone else was changed: resourceVersion %s -> %s, owners %v, decisions %v",
				d.Name, versions[d.Name], got.ResourceVersion, got.OwnerReferences, got.Status.Decisions)
		}
	}
}
