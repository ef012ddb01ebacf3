package addon

import (
	"context"
	corev1 "k8s.io/api/core/v1"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
)

// TestAllowedConfigs: of the configurations spoke-1's add-on status.configReferences may name
// (its agent may write them), the hub allows only those worked out from the ClusterManagementAddOn,
// the placement serving spoke-1 (p0), the add-on's spec.configs and the hub's record of p0's
// rollout.
func TestAllowedConfigs(t *testing.T) {
	progression := func(placement string, lastApplied addonv1alpha1.ConfigReferent) addonv1alpha1.InstallProgression {
		return addonv1alpha1.InstallProgression{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "ns", Name: placement},
			ConfigReferences: []addonv1alpha1.InstallConfigReference{{ConfigGroupResource: adc,
				LastAppliedConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: lastApplied, SpecHash: "h0"}}}}
	}
	foos := addonv1alpha1.ConfigGroupResource{Group: "example.com", Resource: "foos"}
	cases := map[string]struct {
		spec        []addonv1alpha1.AddOnConfig
		progression []addonv1alpha1.InstallProgression
		status      []addonv1alpha1.AddOnConfig
	}{
		"the placement's and the default":             {status: []addonv1alpha1.AddOnConfig{cfg(adc, "ns", "p0-adc"), cfg(tpl, "", "tpl-v1")}},
		"forged: the default the placement overrides": {status: []addonv1alpha1.AddOnConfig{cfg(adc, "ns", "default")}},
		"forged: another namespace's config":          {status: []addonv1alpha1.AddOnConfig{cfg(adc, "team-b", "vars")}},
		"forged: another template":                    {status: []addonv1alpha1.AddOnConfig{cfg(tpl, "", "wide")}},
		"the add-on's spec.configs": {spec: []addonv1alpha1.AddOnConfig{cfg(adc, "team-a", "own")},
			status: []addonv1alpha1.AddOnConfig{cfg(adc, "team-a", "own")}},
		"spec.configs of a kind the add-on does not support": {spec: []addonv1alpha1.AddOnConfig{cfg(foos, "", "x")},
			status: []addonv1alpha1.AddOnConfig{cfg(foos, "", "x")}},
		"last applied to its placement": {progression: []addonv1alpha1.InstallProgression{progression("p0", ref("ns", "old"))},
			status: []addonv1alpha1.AddOnConfig{cfg(adc, "ns", "old")}},
		"last applied to another placement": {progression: []addonv1alpha1.InstallProgression{progression("p1", ref("ns", "old"))},
			status: []addonv1alpha1.AddOnConfig{cfg(adc, "ns", "old")}},
	}
	want := map[string]bool{"the placement's and the default": true, "the add-on's spec.configs": true, "last applied to its placement": true}
	got := map[string]bool{}
	for name, tc := range cases {
		cma := cmaWith()
		cma.Status.InstallProgressions = tc.progression
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu"},
			Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: tc.spec}}
		for _, s := range tc.status {
			mca.Status.ConfigReferences = append(mca.Status.ConfigReferences, addonv1alpha1.ConfigReference{ConfigGroupResource: s.ConfigGroupResource,
				DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: s.ConfigReferent, SpecHash: "h1"}})
		}
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cma,
			&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p0"}},
			&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p1"}},
			&clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p0-1",
				Labels: map[string]string{clusterv1beta1.PlacementLabel: "p0", clusterv1beta1.DecisionGroupIndexLabel: "0"}},
				Status: clusterv1beta1.PlacementDecisionStatus{Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "spoke-1"}}}},
			// spoke-1 is accepted: the hub delivers to it (internal/hub/delivery).
			&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "spoke-1"}},
		).Build()
		a, err := AllowedConfigs(context.Background(), c, mca)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Check(mca) == nil {
			got[name] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allowed (-want +got):\n%s", diff)
	}
}

// TestAllowedConfigsMessage: a refusal names the field, what the hub allows and where, and the fix.
func TestAllowedConfigsMessage(t *testing.T) {
	a := &Allowed{Addon: "gpu", Cluster: "spoke-1", Managed: true, fields: map[configKey][]string{
		{adc, ref("ns", "p0-adc")}: {"ClusterManagementAddOn gpu spec.installStrategy.placements[0].configs[0]"}}}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1alpha1.ConfigReference{{ConfigGroupResource: adc,
			DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: ref("team-b", "vars")}}}}}
	want := "ManagedClusterAddOn spoke-1/gpu: status.configReferences[0].desiredConfig names addondeploymentconfigs.addon.open-cluster-management.io team-b/vars, " +
		"which is not the hub's choice for this add-on: addondeploymentconfigs.addon.open-cluster-management.io ns/p0-adc " +
		"(ClusterManagementAddOn gpu spec.installStrategy.placements[0].configs[0]); the hub does not use a configuration it did not choose (agents may write status): " +
		"name the configuration in the ClusterManagementAddOn (spec.supportedConfigs[].defaultConfig, spec.installStrategy.placements[].configs) " +
		"or in the ManagedClusterAddOn's spec.configs, and the hub rewrites status.configReferences as the rollout reaches the cluster"
	got := ""
	if err := a.Check(mca); err != nil {
		got = err.Error()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
