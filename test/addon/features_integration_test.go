//go:build integration

package addon

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/hub/addon"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestFeatureLabelsSelectClusters: a placement written for OCM, selecting clusters by the label
// feature.open-cluster-management.io/addon-<name>=available (as OCM's federated-learning sample
// does for flower-addon), picks a cluster once its add-on is available, and drops it when the
// add-on turns unhealthy or is deleted. The hub labels the clusters; nothing else does. The
// add-on is one without a ClusterManagementAddOn, whose Available condition the test writes as
// its agent would: flower-addon itself is built in now, its Available follows its SuperNode's
// work (test/floweraddon, test/federatedlearning).
func TestFeatureLabelsSelectClusters(t *testing.T) {
	f := start(t, "addon-feature")
	const name = "sample-fl-addon"
	key := addon.FeatureLabelPrefix + name
	c1, c2 := "addon-feature-1", "addon-feature-2"
	for _, c := range []string{c1, c2} {
		f.set.AgentlessCluster(t, c, nil)
		// The hub labels a cluster once its agent has reported (as OCM): play the agent.
		setClusterAvailable(t, f.c, c)
	}
	f.set.AgentlessPlacement(t, "flower", map[string]string{key: addon.FeatureAvailable})
	for _, c := range []string{c1, c2} {
		testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: name}})
	}
	f.waitLabels(t, key, map[string]string{c1: addon.FeatureUnreachable, c2: addon.FeatureUnreachable})
	f.waitDecisions(t, "flower")

	setAddOnAvailable(t, f.c, c1, name, metav1.ConditionTrue)
	setAddOnAvailable(t, f.c, c2, name, metav1.ConditionFalse)
	f.waitLabels(t, key, map[string]string{c1: addon.FeatureAvailable, c2: addon.FeatureUnhealthy})
	f.waitDecisions(t, "flower", c1)

	if err := f.c.Delete(context.Background(), &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name}}); err != nil {
		t.Fatal(err)
	}
	f.waitLabels(t, key, map[string]string{c1: "none", c2: addon.FeatureUnhealthy})
	f.waitDecisions(t, "flower")
}

// setClusterAvailable writes the cluster's Available condition as its agent would.
func setClusterAvailable(t *testing.T, c client.Client, cluster string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "set by the test"})
		return c.Status().Update(context.Background(), mc)
	})
	if err != nil {
		t.Fatalf("setting ManagedCluster %s Available: %v", cluster, err)
	}
}

// setAddOnAvailable writes the add-on's Available condition as its agent would.
func setAddOnAvailable(t *testing.T, c client.Client, cluster, name string, status metav1.ConditionStatus) {
	t.Helper()
	m := &addonv1alpha1.ManagedClusterAddOn{}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: name}, m); err != nil {
			return err
		}
		meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable,
			Status: status, Reason: "SetByTest", Message: "set by the test"})
		return c.Status().Update(context.Background(), m)
	})
	if err != nil {
		t.Fatalf("setting the Available condition of %s/%s: %v", cluster, name, err)
	}
}

// waitLabels waits until each cluster's label key has the value wanted ("none": no label).
func (f *fleet) waitLabels(t *testing.T, key string, want map[string]string) {
	t.Helper()
	testenv.WaitFor(t, wait, "label "+key+" on the clusters", func(ctx context.Context) (bool, string, error) {
		got := map[string]string{}
		for c := range want {
			mc := &clusterv1.ManagedCluster{}
			if err := f.c.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
				return false, "", err
			}
			v, ok := mc.Labels[key]
			if !ok {
				v = "none"
			}
			got[c] = v
		}
		diff := cmp.Diff(want, got)
		return diff == "", "(-want +got)\n" + diff, nil
	})
}

// waitDecisions waits until the placement's decisions are exactly the clusters given.
func (f *fleet) waitDecisions(t *testing.T, placement string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	testenv.WaitFor(t, wait, fmt.Sprintf("placement %s deciding %v", placement, want), func(ctx context.Context) (bool, string, error) {
		l := &clusterv1beta1.PlacementDecisionList{}
		if err := f.c.List(ctx, l, client.InNamespace(f.set.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
			return false, "", err
		}
		got := []string{}
		for _, d := range l.Items {
			for _, c := range d.Status.Decisions {
				got = append(got, c.ClusterName)
			}
		}
		slices.Sort(got)
		diff := cmp.Diff(want, got)
		return diff == "", "(-want +got)\n" + diff, nil
	})
}
