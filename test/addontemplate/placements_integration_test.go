//go:build integration

package addontemplate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const e2eLabel = "addon-e2e"

// label sets or removes (value "") the e2e label of a cluster on the hub.
func label(t *testing.T, hub client.Client, cluster, value string) {
	t.Helper()
	var v any = value
	if value == "" {
		v = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{e2eLabel: v}}})
	if err != nil {
		t.Fatal(err)
	}
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	if err := hub.Patch(context.Background(), mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// testPlacementsRollout: a template add-on installed by Placements with a Progressive rollout
// (one cluster at a time) becomes Available on all three clusters, with real agents; a cluster
// whose label stops matching loses it (the agent's Deployment goes from its spoke); deleting the
// ClusterManagementAddOn removes it everywhere. On the way, the agent's Deployment deleted on a
// spoke where it cannot run again turns the add-on Available=False, naming it.
func testPlacementsRollout(t *testing.T, env *testenv.Env, hub client.Client, all []*joined) {
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub)
	testenv.Create(t, hub, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "global"},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}})
	testenv.Create(t, hub, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "e2e"}, Spec: clusterv1beta1.PlacementSpec{
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{e2eLabel: "yes"}}}}},
	}})
	for _, j := range all {
		label(t, hub, j.Name, "yes")
	}
	testenv.Create(t, hub, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "e2e-v1"},
		Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: "e2e",
			AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: agentManifests(t, "e2e")}}}})
	one := intstr.FromInt32(1)
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "e2e"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonGroup, Resource: "addontemplates"},
					DefaultConfig: &addonv1alpha1.ConfigReferent{Name: "e2e-v1"}},
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonGroup, Resource: "addondeploymentconfigs"},
					DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: configNS, Name: "defaults"}},
			},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyPlacements,
				Placements: []addonv1alpha1.PlacementStrategy{{
					PlacementRef: addonv1alpha1.PlacementRef{Namespace: ns, Name: "e2e"},
					RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
						Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: one}},
				}}},
		}}
	if err := hub.Create(ctx, cma); err != nil {
		t.Fatal(err)
	}

	for _, j := range all {
		m := waitAddOn(t, hub, j.Name, "e2e", "installed by the placement, ManifestApplied and Available", availableAndApplied)
		if ref := metav1.GetControllerOf(m); ref == nil || ref.Kind != "ClusterManagementAddOn" || ref.Name != "e2e" {
			t.Errorf("%s: the add-on's controller is %+v, want ClusterManagementAddOn e2e", j.Name, ref)
		}
		if _, err := j.Spoke.Client.AppsV1().Deployments(agentNS).Get(ctx, "e2e-agent", metav1.GetOptions{}); err != nil {
			t.Errorf("the agent on %s: %v", j.Name, err)
		}
	}
	testenv.WaitFor(t, wait, "the install progression to succeed on 3 of 3 clusters", func(ctx context.Context) (bool, string, error) {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(cma), cma); err != nil {
			return false, "", err
		}
		if len(cma.Status.InstallProgressions) != 1 {
			return false, "no install progression", nil
		}
		c := meta.FindStatusCondition(cma.Status.InstallProgressions[0].Conditions, "Progressing")
		if c == nil {
			return false, "no Progressing condition", nil
		}
		return c.Status == metav1.ConditionFalse && c.Reason == "InstallSucceed", c.Reason + ": " + c.Message, nil
	})

	// Health from the work: the agent's Deployment deleted on a spoke whose nodes take no pods is
	// made again by the work agent but cannot run, and the add-on says so, naming it.
	sick := all[1]
	setUnschedulable(t, sick, true)
	if err := sick.Spoke.Client.AppsV1().Deployments(agentNS).Delete(ctx, "e2e-agent", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	m := waitAddOn(t, hub, sick.Name, "e2e", "Available False once its Deployment cannot run", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == addontemplate.ReasonProbeUnavailable
	})
	if got := conditionState(m, addonv1alpha1.ManagedClusterAddOnConditionAvailable); !strings.Contains(got, "e2e-agent") {
		t.Errorf("Available %q does not name the Deployment e2e-agent", got)
	}
	setUnschedulable(t, sick, false)
	waitAddOn(t, hub, sick.Name, "e2e", "Available again once its Deployment runs", availableAndApplied)

	leaving := all[2]
	label(t, hub, leaving.Name, "")
	waitGone(t, "the add-on of "+leaving.Name+", whose label no longer matches", func(ctx context.Context) error {
		return hub.Get(ctx, client.ObjectKey{Namespace: leaving.Name, Name: "e2e"}, &addonv1alpha1.ManagedClusterAddOn{})
	})
	waitGone(t, "the agent's Deployment on "+leaving.Name, func(ctx context.Context) error {
		_, err := leaving.Spoke.Client.AppsV1().Deployments(agentNS).Get(ctx, "e2e-agent", metav1.GetOptions{})
		return err
	})
	waitAddOn(t, hub, all[0].Name, "e2e", "still Available on a cluster that stays", availableAndApplied)

	if err := hub.Delete(ctx, cma); err != nil {
		t.Fatal(err)
	}
	for _, j := range all[:2] {
		waitGone(t, "the add-on of "+j.Name, func(ctx context.Context) error {
			return hub.Get(ctx, client.ObjectKey{Namespace: j.Name, Name: "e2e"}, &addonv1alpha1.ManagedClusterAddOn{})
		})
		waitGone(t, "the agent's Deployment on "+j.Name, func(ctx context.Context) error {
			_, err := j.Spoke.Client.AppsV1().Deployments(agentNS).Get(ctx, "e2e-agent", metav1.GetOptions{})
			return err
		})
	}
	waitGone(t, "ClusterManagementAddOn e2e", func(ctx context.Context) error {
		return hub.Get(ctx, client.ObjectKey{Name: "e2e"}, &addonv1alpha1.ClusterManagementAddOn{})
	})
}

// setUnschedulable cordons or uncordons every node of the spoke.
func setUnschedulable(t *testing.T, j *joined, on bool) {
	t.Helper()
	ctx := context.Background()
	nodes, err := j.Spoke.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on))
	for _, n := range nodes.Items {
		if _, err := j.Spoke.Client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
