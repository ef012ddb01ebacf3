//go:build integration

package addon

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	configured    = "True/ConfigurationsConfigured"
	notConfigured = "False/ConfigurationsNotConfigured"
)

// placements is an install strategy of one placement of the test's namespace.
func (f *fleet) placements(name string, strategy clusterv1alpha1.RolloutStrategy) addonv1alpha1.InstallStrategy {
	return addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyPlacements, Placements: []addonv1alpha1.PlacementStrategy{
		{PlacementRef: addonv1alpha1.PlacementRef{Namespace: f.set.Namespace, Name: name}, RolloutStrategy: strategy}}}
}

// withDefault is a supported AddOnDeploymentConfig kind with a default object.
func withDefault(ns, name string) []addonv1alpha1.ConfigMeta {
	return []addonv1alpha1.ConfigMeta{{ConfigGroupResource: adcGR, DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: ns, Name: name}}}
}

func TestProgressiveInstallAndUpgrade(t *testing.T) {
	f := start(t, "addon-prog")
	const name = "addon-prog"
	c1, c2, c3 := "addon-prog-1", "addon-prog-2", "addon-prog-3"
	for _, c := range []string{c1, c2, c3} {
		f.set.AgentlessCluster(t, c, map[string]string{"gpu": "yes"})
	}
	f.set.AgentlessPlacement(t, "gpu", map[string]string{"gpu": "yes"})
	cfg := f.deploymentConfig(t, "gpu-config", "gpu-agent")
	h1 := short(f.hashOf(t, f.set.Namespace, "gpu-config"))
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: addonv1alpha1.ClusterManagementAddOnSpec{
		SupportedConfigs: withDefault(f.set.Namespace, "gpu-config"),
		InstallStrategy: f.placements("gpu", clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}),
	}}
	testenv.Create(t, f.c, cma)

	// Every selected cluster gets its ManagedClusterAddOn at once, owned by the add-on, as in OCM;
	// the configuration reaches them one at a time, in name order.
	mcas := f.waitAddons(t, name, c1, c2, c3)
	for c, m := range mcas {
		if ref := metav1.GetControllerOf(m); ref == nil || ref.UID != cma.UID || ref.Kind != "ClusterManagementAddOn" {
			t.Errorf("ManagedClusterAddOn %s/%s has controller %v, want ClusterManagementAddOn %s (UID %s)", c, name, ref, name, cma.UID)
		}
	}
	f.waitConfigured(t, name, map[string]string{c1: configured + " gpu-config@" + h1, c2: notConfigured, c3: notConfigured})
	f.waitProgression(t, name, "gpu", is("True/Installing: 1/3 installing..."))

	f.agentDone(t, c1, name)
	f.waitConfigured(t, name, map[string]string{c1: configured + " gpu-config@" + h1, c2: configured + " gpu-config@" + h1, c3: notConfigured})
	f.agentDone(t, c2, name)
	f.waitConfigured(t, name, map[string]string{c1: configured + " gpu-config@" + h1, c2: configured + " gpu-config@" + h1, c3: configured + " gpu-config@" + h1})
	f.agentDone(t, c3, name)
	got := f.waitProgression(t, name, "gpu", is("False/InstallSucceed: 3/3 install completed with no errors."))

	full := f.hashOf(t, f.set.Namespace, "gpu-config")
	wantDefaults := []addonv1alpha1.DefaultConfigReference{{ConfigGroupResource: adcGR,
		DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: f.set.Namespace, Name: "gpu-config"}, SpecHash: full}}}
	if diff := cmp.Diff(wantDefaults, got.Status.DefaultConfigReferences); diff != "" {
		t.Errorf("defaultconfigReferences (-want +got):\n%s", diff)
	}
	applied := got.Status.InstallProgressions[0].ConfigReferences
	if len(applied) != 1 || applied[0].LastAppliedConfig == nil || applied[0].LastAppliedConfig.SpecHash != full ||
		applied[0].LastKnownGoodConfig == nil || applied[0].LastKnownGoodConfig.SpecHash != full {
		t.Errorf("the install progression's configReferences are %+v, want desired, last applied and last known good %s", applied, full)
	}
	m := &addonv1alpha1.ManagedClusterAddOn{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: c1, Name: name}, m); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); c == nil || c.Reason != "Completed" || c.Status != metav1.ConditionFalse {
		t.Errorf("ManagedClusterAddOn %s/%s has Progressing %+v, want False/Completed", c1, name, c)
	}
	if refs := m.Status.ConfigReferences; len(refs) != 1 || refs[0].LastAppliedConfig == nil || refs[0].LastAppliedConfig.SpecHash != full {
		t.Errorf("ManagedClusterAddOn %s/%s has configReferences %+v, want %s applied", c1, name, refs, full)
	}

	// A new version of the configuration rolls out the same way: one cluster at a time.
	testenv.Update(t, f.c, cfg, func() { cfg.Spec.AgentInstallNamespace = "gpu-agent-v2" })
	h2 := short(f.hashOf(t, f.set.Namespace, "gpu-config"))
	f.waitConfigured(t, name, map[string]string{c1: configured + " gpu-config@" + h2, c2: notConfigured + " gpu-config@" + h1, c3: notConfigured + " gpu-config@" + h1})
	f.waitProgression(t, name, "gpu", is("True/Upgrading: 1/3 upgrading..."))
	f.agentDone(t, c1, name)
	f.waitConfigured(t, name, map[string]string{c1: configured + " gpu-config@" + h2, c2: configured + " gpu-config@" + h2, c3: notConfigured + " gpu-config@" + h1})
}

func TestClustersLeaveAndUsersAddOnsStay(t *testing.T) {
	f := start(t, "addon-leave")
	const name = "addon-leave"
	c1, c2, c3, c4 := "addon-leave-1", "addon-leave-2", "addon-leave-3", "addon-leave-4"
	for _, c := range []string{c1, c2, c4} {
		f.set.AgentlessCluster(t, c, map[string]string{"app": "x"})
	}
	f.set.AgentlessCluster(t, c3, nil)
	f.set.AgentlessPlacement(t, "x", map[string]string{"app": "x"})
	// Users' own add-ons: one in a cluster the placement does not select, one in a cluster it does.
	for _, c := range []string{c3, c4} {
		testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: name}})
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: addonv1alpha1.ClusterManagementAddOnSpec{
		InstallStrategy: f.placements("x", clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}),
	}}
	testenv.Create(t, f.c, cma)

	mcas := f.waitAddons(t, name, c1, c2, c3, c4)
	// With no configuration to roll out, every add-on is configured at once.
	f.waitConfigured(t, name, map[string]string{c1: configured, c2: configured, c3: configured, c4: configured})
	f.waitProgression(t, name, "x", contains("False/InstallSucceed: 3/3 install completed with no errors.",
		"not created by this ClusterManagementAddOn, left alone", c4+"/"+name))
	for _, c := range []string{c3, c4} {
		if refs := mcas[c].OwnerReferences; len(refs) != 0 {
			t.Errorf("the user's ManagedClusterAddOn %s/%s got owner references %v; the hub must not adopt it", c, name, refs)
		}
	}

	// A cluster whose label no longer matches loses the hub's add-on.
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c2}}
	testenv.Update(t, f.c, mc, func() { delete(mc.Labels, "app") })
	f.waitAddons(t, name, c1, c3, c4)
	f.waitProgression(t, name, "x", contains("2/2 install completed"))

	// Deleting the add-on deletes the hub's ManagedClusterAddOns, never the users'.
	if err := f.c.Delete(context.Background(), cma); err != nil {
		t.Fatal(err)
	}
	f.waitAddons(t, name, c3, c4)
}

func TestManualStrategy(t *testing.T) {
	f := start(t, "addon-manual")
	const name = "addon-manual"
	c1, c2, c3 := "addon-manual-1", "addon-manual-2", "addon-manual-3"
	for _, c := range []string{c1, c2, c3} {
		f.set.AgentlessCluster(t, c, nil)
	}
	f.deploymentConfig(t, "default", "ns-a")
	f.deploymentConfig(t, "own", "ns-b")
	hDefault, hOwn := short(f.hashOf(t, f.set.Namespace, "default")), short(f.hashOf(t, f.set.Namespace, "own"))
	testenv.Create(t, f.c, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: addonv1alpha1.ClusterManagementAddOnSpec{
		SupportedConfigs: withDefault(f.set.Namespace, "default"),
		InstallStrategy:  addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
	}})
	// Users enable the add-on: one with the default configuration, one with its own (which wins),
	// one with a configuration that does not exist.
	own := func(cfgName string) []addonv1alpha1.AddOnConfig {
		return []addonv1alpha1.AddOnConfig{{ConfigGroupResource: adcGR, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: f.set.Namespace, Name: cfgName}}}
	}
	testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name}})
	testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c2, Name: name},
		Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: own("own")}})
	testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c3, Name: name},
		Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: own("no-such-config")}})

	f.waitConfigured(t, name, map[string]string{c1: configured + " default@" + hDefault, c2: configured + " own@" + hOwn, c3: "False/ConfigurationNotFound"})
	f.waitCondition(t, c3, name, addonv1alpha1.ManagedClusterAddOnConditionConfigured,
		contains(fmt.Sprintf("ManagedClusterAddOn %s/%s spec.configs[0] names addondeploymentconfigs.addon.open-cluster-management.io %s/no-such-config, which does not exist",
			c3, name, f.set.Namespace)))
	// Manual: the hub made none of its own, and adopted none.
	mcas := f.waitAddons(t, name, c1, c2, c3)
	for c, m := range mcas {
		if len(m.OwnerReferences) != 0 {
			t.Errorf("ManagedClusterAddOn %s/%s got owner references %v under the Manual strategy", c, name, m.OwnerReferences)
		}
	}
}

func TestBadInputLeavesOtherAddOnsWorking(t *testing.T) {
	f := start(t, "addon-bad")
	c1 := "addon-bad-1"
	f.set.AgentlessCluster(t, c1, map[string]string{"app": "y"})
	f.set.AgentlessPlacement(t, "y", map[string]string{"app": "y"})
	f.deploymentConfig(t, "good", "ns-good")
	all := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}

	// A placement that does not exist.
	testenv.Create(t, f.c, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "addon-bad-placement"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: f.placements("no-such-placement", all)}})
	// A default configuration that does not exist.
	testenv.Create(t, f.c, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "addon-bad-config"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: withDefault(f.set.Namespace, "missing"), InstallStrategy: f.placements("y", all)}})
	// A good add-on on the same cluster.
	testenv.Create(t, f.c, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "addon-good"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: withDefault(f.set.Namespace, "good"), InstallStrategy: f.placements("y", all)}})

	f.waitProgression(t, "addon-bad-placement", "no-such-placement", is(fmt.Sprintf(
		"False/PlacementNotFound: Placement %s/no-such-placement (spec.installStrategy.placements[0]) does not exist: "+
			"create it or name an existing Placement; the add-on is installed on none of its clusters", f.set.Namespace)))
	missing := fmt.Sprintf("ClusterManagementAddOn addon-bad-config spec.supportedConfigs[0].defaultConfig names addondeploymentconfigs.addon.open-cluster-management.io %s/missing, which does not exist",
		f.set.Namespace)
	f.waitAddons(t, "addon-bad-config", c1)
	f.waitCondition(t, c1, "addon-bad-config", addonv1alpha1.ManagedClusterAddOnConditionConfigured, contains("False/ConfigurationNotFound", missing))
	f.waitProgression(t, "addon-bad-config", "y", contains("True/Installing: 0/1 installing...", missing))
	f.waitConfigured(t, "addon-good", map[string]string{c1: configured + " good@" + short(f.hashOf(t, f.set.Namespace, "good"))})

	// Creating the missing configuration fixes the add-on.
	f.deploymentConfig(t, "missing", "ns-late")
	f.waitConfigured(t, "addon-bad-config", map[string]string{c1: configured + " missing@" + short(f.hashOf(t, f.set.Namespace, "missing"))})
}

// waitCondition waits until the add-on's condition typ, as Status/Reason: Message, satisfies ok.
func (f *fleet) waitCondition(t *testing.T, cluster, name, typ string, ok func(string) bool) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("condition %s of ManagedClusterAddOn %s/%s", typ, cluster, name), func(ctx context.Context) (bool, string, error) {
		m := &addonv1alpha1.ManagedClusterAddOn{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, m); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		c := meta.FindStatusCondition(m.Status.Conditions, typ)
		if c == nil {
			return false, "missing", nil
		}
		got := string(c.Status) + "/" + c.Reason + ": " + c.Message
		return ok(got), got, nil
	})
}
