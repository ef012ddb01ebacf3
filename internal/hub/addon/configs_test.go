package addon

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

var (
	adc = addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}
	tpl = addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addontemplates"}
	cm  = addonv1alpha1.ConfigGroupResource{Resource: "configmaps"}
)

func ref(ns, name string) addonv1alpha1.ConfigReferent {
	return addonv1alpha1.ConfigReferent{Namespace: ns, Name: name}
}

func cfg(gr addonv1alpha1.ConfigGroupResource, ns, name string) addonv1alpha1.AddOnConfig {
	return addonv1alpha1.AddOnConfig{ConfigGroupResource: gr, ConfigReferent: ref(ns, name)}
}

// cmaWith is a CMA supporting adc (default ns/default) and tpl (default tpl-v1), installed by
// placements p0 (adc p0-adc) and p1 (no configs).
func cmaWith() *addonv1alpha1.ClusterManagementAddOn {
	d1, d2 := ref("ns", "default"), ref("", "tpl-v1")
	return &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "cma-uid"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{
				{ConfigGroupResource: tpl, DefaultConfig: &d2},
				{ConfigGroupResource: adc, DefaultConfig: &d1},
				{ConfigGroupResource: cm},
			},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyPlacements, Placements: []addonv1alpha1.PlacementStrategy{
				{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "ns", Name: "p0"}, Configs: []addonv1alpha1.AddOnConfig{cfg(adc, "ns", "p0-adc")}},
				{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "ns", Name: "p1"}},
			}},
		},
	}
}

// short renders wanted configs as resource namespace/name <- field, for readable diffs.
func short(ws []wantedConfig) []string {
	out := []string{}
	for _, w := range ws {
		out = append(out, w.key().String()+" <- "+w.Field)
	}
	return out
}

func TestConfigPrecedence(t *testing.T) {
	cases := map[string]struct {
		placement  int
		mcaConfigs []addonv1alpha1.AddOnConfig
		want       []string
	}{
		"defaults only (no placement)": {
			placement: -1,
			want: []string{
				"addondeploymentconfigs.addon.open-cluster-management.io ns/default <- ClusterManagementAddOn gpu spec.supportedConfigs[1].defaultConfig",
				"addontemplates.addon.open-cluster-management.io tpl-v1 <- ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig",
			},
		},
		"the placement's config replaces the default of its kind": {
			placement: 0,
			want: []string{
				"addondeploymentconfigs.addon.open-cluster-management.io ns/p0-adc <- ClusterManagementAddOn gpu spec.installStrategy.placements[0].configs[0]",
				"addontemplates.addon.open-cluster-management.io tpl-v1 <- ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig",
			},
		},
		"a placement without configs keeps the defaults": {
			placement: 1,
			want: []string{
				"addondeploymentconfigs.addon.open-cluster-management.io ns/default <- ClusterManagementAddOn gpu spec.supportedConfigs[1].defaultConfig",
				"addontemplates.addon.open-cluster-management.io tpl-v1 <- ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig",
			},
		},
		"the add-on's own config replaces the placement's": {
			placement:  0,
			mcaConfigs: []addonv1alpha1.AddOnConfig{cfg(adc, "c1", "mine")},
			want: []string{
				"addondeploymentconfigs.addon.open-cluster-management.io c1/mine <- ManagedClusterAddOn c1/gpu spec.configs[0]",
				"addontemplates.addon.open-cluster-management.io tpl-v1 <- ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig",
			},
		},
		"the add-on may add a supported kind without a default, and two of one kind": {
			placement:  -1,
			mcaConfigs: []addonv1alpha1.AddOnConfig{cfg(cm, "c1", "b"), cfg(cm, "c1", "a")},
			// Ordered by group (the core group first), then resource, as OCM lists them.
			want: []string{
				"configmaps c1/b <- ManagedClusterAddOn c1/gpu spec.configs[0]",
				"configmaps c1/a <- ManagedClusterAddOn c1/gpu spec.configs[1]",
				"addondeploymentconfigs.addon.open-cluster-management.io ns/default <- ClusterManagementAddOn gpu spec.supportedConfigs[1].defaultConfig",
				"addontemplates.addon.open-cluster-management.io tpl-v1 <- ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig",
			},
		},
		"a kind the add-on does not support is left out": {
			placement:  1,
			mcaConfigs: []addonv1alpha1.AddOnConfig{cfg(addonv1alpha1.ConfigGroupResource{Group: "x.io", Resource: "others"}, "", "o")},
			want: []string{
				"addondeploymentconfigs.addon.open-cluster-management.io ns/default <- ClusterManagementAddOn gpu spec.supportedConfigs[1].defaultConfig",
				"addontemplates.addon.open-cluster-management.io tpl-v1 <- ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cma := cmaWith()
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu"},
				Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: tc.mcaConfigs}}
			got := addonConfigs(cma, placementConfigs(cma, tc.placement), mca)
			if diff := cmp.Diff(tc.want, short(got)); diff != "" {
				t.Errorf("configs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecHash(t *testing.T) {
	cases := map[string]struct {
		obj     map[string]any
		want    string
		wantErr bool
	}{
		// Expected values: sha256 of the compact JSON with sorted keys, computed outside Go.
		"keys in any order hash alike": {
			obj: map[string]any{"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "AddOnDeploymentConfig",
				"metadata": map[string]any{"name": "a", "generation": int64(3)},
				"spec":     map[string]any{"customizedVariables": []any{map[string]any{"value": "2", "name": "LOG_LEVEL"}}, "agentInstallNamespace": "gpu-agent"}},
			want: "db99c2482380b2f4505201f152af76d72e2a0bcb70044226d1b07faf1e8be490",
		},
		"an empty spec": {
			obj:  map[string]any{"kind": "AddOnDeploymentConfig", "spec": map[string]any{}},
			want: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
		},
		"no spec": {
			obj:     map[string]any{"kind": "ConfigMap", "data": map[string]any{"k": "v"}},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := SpecHash(&unstructured.Unstructured{Object: tc.obj})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hash (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveNamesTheFieldOfAMissingConfig(t *testing.T) {
	cma := cmaWith()
	ws := placementConfigs(cma, 0)
	h := hashes{hash: map[configKey]string{ws[1].key(): "h-tpl"}, problems: map[configKey]string{ws[0].key(): "does not exist: create it, or name an existing object"}}
	refs, problems := h.resolve(ws)
	wantRefs := []addonv1alpha1.ConfigReference{{ConfigGroupResource: tpl, ConfigReferent: ref("", "tpl-v1"),
		DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: ref("", "tpl-v1"), SpecHash: "h-tpl"}}}
	if diff := cmp.Diff(wantRefs, refs); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
	wantProblems := []string{"ClusterManagementAddOn gpu spec.installStrategy.placements[0].configs[0] names addondeploymentconfigs.addon.open-cluster-management.io ns/p0-adc, which does not exist: create it, or name an existing object"}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestMergeConfigReferences(t *testing.T) {
	hashed := func(name, hash string) *addonv1alpha1.ConfigSpecHash {
		return &addonv1alpha1.ConfigSpecHash{ConfigReferent: ref("ns", name), SpecHash: hash}
	}
	desired := func(gr addonv1alpha1.ConfigGroupResource, name, hash string) addonv1alpha1.ConfigReference {
		return addonv1alpha1.ConfigReference{ConfigGroupResource: gr, ConfigReferent: ref("ns", name), DesiredConfig: hashed(name, hash)}
	}
	cases := map[string]struct {
		current, desired, want []addonv1alpha1.ConfigReference
	}{
		"first configuration": {
			desired: []addonv1alpha1.ConfigReference{desired(tpl, "t", "1"), desired(adc, "a", "1")},
			want:    []addonv1alpha1.ConfigReference{desired(adc, "a", "1"), desired(tpl, "t", "1")},
		},
		"a new version keeps what was applied": {
			current: []addonv1alpha1.ConfigReference{func() addonv1alpha1.ConfigReference {
				r := desired(adc, "a", "1")
				r.LastAppliedConfig = hashed("a", "1")
				return r
			}()},
			desired: []addonv1alpha1.ConfigReference{desired(adc, "a", "2")},
			want: []addonv1alpha1.ConfigReference{func() addonv1alpha1.ConfigReference {
				r := desired(adc, "a", "2")
				r.LastAppliedConfig = hashed("a", "1")
				return r
			}()},
		},
		"another object of the kind starts afresh, and configs no longer desired go": {
			current: []addonv1alpha1.ConfigReference{func() addonv1alpha1.ConfigReference {
				r := desired(adc, "a", "1")
				r.LastAppliedConfig = hashed("a", "1")
				return r
			}(), desired(cm, "c", "1")},
			desired: []addonv1alpha1.ConfigReference{desired(adc, "b", "1")},
			want:    []addonv1alpha1.ConfigReference{desired(adc, "b", "1")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mergeConfigReferences(tc.current, tc.desired)); diff != "" {
				t.Errorf("configReferences (-want +got):\n%s", diff)
			}
		})
	}
}
