//go:build integration

package work

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// testProgressiveRollout rolls a ManifestWorkReplicaSet out over both clusters with real agents:
// Progressive, one cluster at a time, maxFailures 0. The work carries a ConfigMap with
// CreateOnly, and condition rules that say Progressing and Degraded from its data. On the first
// cluster (by name) the ConfigMap already exists with state "bad": its agent leaves it, reports
// the work Progressing and Degraded, the rollout counts it failed and stops, and the second
// cluster gets no work. When the first cluster's ConfigMap turns "good", its agent reports the
// work succeeded and the rollout goes on to the second.
func testProgressiveRollout(t *testing.T, te *testEnv) {
	ctx := context.Background()
	first, second := te.clusters[0], te.clusters[1]
	if first.Name > second.Name {
		first, second = second, first
	}
	ns := te.env.Namespace(t, te.env.Hub)
	testenv.Create(t, te.hub, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "global"},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}})
	testenv.Create(t, te.hub, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "both"}, Spec: clusterv1beta1.PlacementSpec{
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{
			CelExpressions: []string{fmt.Sprintf("managedCluster.metadata.name in [%q, %q]", first.Name, second.Name)}}}}},
	}})

	const cmNS = "rollout"
	for _, j := range []*joined{first, second} {
		if _, err := j.Spoke.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cmNS}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": cmNS, "name": "state"}, "data": map[string]any{"state": "bad"}}}
	if _, err := first.Dyn.Resource(cmGVR).Namespace(cmNS).Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	s := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rollout"}, Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
		ManifestWorkTemplate: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: manifests(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": cmNS, "name": "state"}, "data": map[string]any{"state": "good"}})},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: cmNS, Name: "state"},
				UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly},
				ConditionRules: []workv1.ConditionRule{
					{Condition: workv1.WorkProgressing, Type: workv1.CELConditionExpressionsType, CelExpressions: []string{`object.data.state != "good"`}},
					{Condition: workv1.WorkDegraded, Type: workv1.CELConditionExpressionsType, CelExpressions: []string{`object.data.state == "bad"`}},
				},
			}},
		},
		PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "both", RolloutStrategy: clusterv1alpha1.RolloutStrategy{
			Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}}},
		CascadeDeletionPolicy: workv1alpha1.Background,
	}}
	testenv.Create(t, te.hub, s)
	t.Cleanup(func() { _ = te.hub.Delete(context.Background(), s) })

	works := func(ctx context.Context) ([]string, error) {
		var out []string
		for _, j := range []*joined{first, second} {
			err := te.hub.Get(ctx, client.ObjectKey{Namespace: j.Name, Name: s.Name}, &workv1.ManifestWork{})
			switch {
			case err == nil:
				out = append(out, j.Name)
			case client.IgnoreNotFound(err) != nil:
				return nil, err
			}
		}
		return out, nil
	}
	rolledOut := func(ctx context.Context) (*metav1.Condition, error) {
		got := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := te.hub.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
			return nil, err
		}
		return meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut), nil
	}

	testenv.WaitFor(t, 90*time.Second, "the rollout to stop at "+first.Name+", whose work fails", func(ctx context.Context) (bool, string, error) {
		c, err := rolledOut(ctx)
		if err != nil || c == nil {
			return false, "no PlacementRolledOut yet", err
		}
		return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "stopped"), c.Reason + ": " + c.Message, nil
	})
	if got, err := works(ctx); err != nil || len(got) != 1 || got[0] != first.Name {
		t.Fatalf("works of the stopped rollout: %v (%v), want only %s's", got, err, first.Name)
	}
	// The rollout stays stopped: the second cluster gets nothing while the first keeps failing.
	time.Sleep(5 * time.Second)
	if got, _ := works(ctx); len(got) != 1 {
		t.Fatalf("works while the first cluster fails: %v, want only %s's", got, first.Name)
	}

	cur, err := first.Dyn.Resource(cmGVR).Namespace(cmNS).Get(ctx, "state", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Object["data"] = map[string]any{"state": "good"}
	if _, err := first.Dyn.Resource(cmGVR).Namespace(cmNS).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 90*time.Second, "the rollout to go on to "+second.Name+" and finish", func(ctx context.Context) (bool, string, error) {
		c, err := rolledOut(ctx)
		if err != nil || c == nil {
			return false, "no PlacementRolledOut yet", err
		}
		got, err := works(ctx)
		return c.Status == metav1.ConditionTrue && len(got) == 2, fmt.Sprintf("works %v; %s: %s", got, c.Reason, c.Message), err
	})
	if _, err := getCM(t, second, cmNS, "state"); err != nil {
		t.Errorf("the ConfigMap on %s, which the rollout reached: %v", second.Name, err)
	}
}
