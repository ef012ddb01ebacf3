//go:build integration

package placement

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestReacts shows that a binding made after the placement, and a change of an
// AddOnPlacementScore, reschedule the placements they concern.
func TestReacts(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-react")
	f.Cluster(t, "pl-react-1", nil)
	f.Cluster(t, "pl-react-2", nil)

	t.Run("a binding made later", func(t *testing.T) {
		ns := env.Namespace(t, env.Hub)
		testenv.Create(t, c, labelPlacement(ns, "later", 2, nil))
		waitStatus(t, c, ns, "later", 0, map[string]string{
			clusterv1beta1.PlacementConditionSatisfied: "False/" + clusterv1beta1.PlacementReasonNoManagedClusterSetBindings})
		testenv.Create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: f.Set, Namespace: ns},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: f.Set}})
		waitDecisions(t, c, ns, "later", decisionView{"later-decision-1": {Labels: labels("later", "", 0), Clusters: []string{"pl-react-1", "pl-react-2"}}})
		waitStatus(t, c, ns, "later", 2, satisfied)
	})

	t.Run("an AddOnPlacementScore changes", func(t *testing.T) {
		scores := map[string]*clusterv1alpha1.AddOnPlacementScore{}
		for cluster, v := range map[string]int32{"pl-react-1": 10, "pl-react-2": 90} {
			if _, err := env.Hub.Client.CoreV1().Namespaces().Create(context.Background(),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = env.Hub.Client.CoreV1().Namespaces().Delete(context.Background(), cluster, metav1.DeleteOptions{})
			})
			s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: cluster}}
			testenv.Create(t, c, s)
			value := v
			setScore(t, c, s, value)
			scores[cluster] = s
		}
		p := labelPlacement(f.Namespace, "scored", 1, nil)
		p.Spec.PrioritizerPolicy = clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
				Type: clusterv1beta1.ScoreCoordinateTypeAddOn, AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "demo"}}}}}
		testenv.Create(t, c, p)
		waitDecisions(t, c, f.Namespace, "scored", decisionView{"scored-decision-1": {Labels: labels("scored", "", 0), Clusters: []string{"pl-react-2"}}})

		s := scores["pl-react-1"]
		setScore(t, c, s, 100)
		waitDecisions(t, c, f.Namespace, "scored", decisionView{"scored-decision-1": {Labels: labels("scored", "", 0), Clusters: []string{"pl-react-1"}}})
	})
}

// setScore writes the score "demo" of s (a status subresource).
func setScore(t *testing.T, c client.Client, s *clusterv1alpha1.AddOnPlacementScore, v int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		s.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "demo", Value: v}}
		return c.Status().Update(context.Background(), s)
	})
	if err != nil {
		t.Fatalf("scoring %s/%s: %v", s.Namespace, s.Name, err)
	}
}
