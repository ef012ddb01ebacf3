package addon

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// wantedConfig is one configuration an add-on on a cluster should run with, and the field that
// named it (for messages when it does not resolve).
type wantedConfig struct {
	addonv1alpha1.ConfigGroupResource
	addonv1alpha1.ConfigReferent
	// Field names where the reference was made, for example
	// "ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig".
	Field string
}

// configKey identifies a configuration object.
type configKey struct {
	addonv1alpha1.ConfigGroupResource
	addonv1alpha1.ConfigReferent
}

func (w wantedConfig) key() configKey { return configKey{w.ConfigGroupResource, w.ConfigReferent} }

// String is resource.group namespace/name, as a person would look the object up.
func (k configKey) String() string {
	res := k.Resource
	if k.Group != "" {
		res += "." + k.Group
	}
	if k.Namespace == "" {
		return res + " " + k.Name
	}
	return res + " " + k.Namespace + "/" + k.Name
}

// defaultConfigs are the CMA's default configurations (spec.supportedConfigs[].defaultConfig).
func defaultConfigs(cma *addonv1alpha1.ClusterManagementAddOn) []wantedConfig {
	var out []wantedConfig
	for i, sc := range cma.Spec.SupportedConfigs {
		if sc.DefaultConfig == nil {
			continue
		}
		out = append(out, wantedConfig{ConfigGroupResource: sc.ConfigGroupResource, ConfigReferent: *sc.DefaultConfig,
			Field: fmt.Sprintf("ClusterManagementAddOn %s spec.supportedConfigs[%d].defaultConfig", cma.Name, i)})
	}
	return sortConfigs(out)
}

// placementConfigs are the defaults overridden by the configs of install placement i (noPlacement: none):
// every group and resource the placement names replaces the default of that group and resource,
// as OCM's addon manager does.
func placementConfigs(cma *addonv1alpha1.ClusterManagementAddOn, i int) []wantedConfig {
	out := defaultConfigs(cma)
	if i < 0 || i >= len(cma.Spec.InstallStrategy.Placements) {
		return out
	}
	var over []wantedConfig
	for j, c := range cma.Spec.InstallStrategy.Placements[i].Configs {
		over = append(over, wantedConfig{ConfigGroupResource: c.ConfigGroupResource, ConfigReferent: c.ConfigReferent,
			Field: fmt.Sprintf("ClusterManagementAddOn %s spec.installStrategy.placements[%d].configs[%d]", cma.Name, i, j)})
	}
	return override(out, over)
}

// addonConfigs are the configurations an add-on on one cluster runs with: base (the defaults, or
// the install placement's) overridden by the ManagedClusterAddOn's spec.configs, group and
// resource at a time. Configs of a group and resource the add-on does not support are left out
// (the Progressing condition reports them, reason ConfigurationUnsupported).
func addonConfigs(cma *addonv1alpha1.ClusterManagementAddOn, base []wantedConfig, mca *addonv1alpha1.ManagedClusterAddOn) []wantedConfig {
	supported := map[addonv1alpha1.ConfigGroupResource]bool{}
	for _, sc := range cma.Spec.SupportedConfigs {
		supported[sc.ConfigGroupResource] = true
	}
	var over []wantedConfig
	for j, c := range mca.Spec.Configs {
		if !supported[c.ConfigGroupResource] {
			continue
		}
		over = append(over, wantedConfig{ConfigGroupResource: c.ConfigGroupResource, ConfigReferent: c.ConfigReferent,
			Field: fmt.Sprintf("ManagedClusterAddOn %s/%s spec.configs[%d]", mca.Namespace, mca.Name, j)})
	}
	return override(base, over)
}

// override replaces, for each group and resource in over, every config of base of that group and
// resource by those of over.
func override(base, over []wantedConfig) []wantedConfig {
	replaced := map[addonv1alpha1.ConfigGroupResource]bool{}
	for _, o := range over {
		replaced[o.ConfigGroupResource] = true
	}
	out := make([]wantedConfig, 0, len(base)+len(over))
	for _, b := range base {
		if !replaced[b.ConfigGroupResource] {
			out = append(out, b)
		}
	}
	for _, o := range over {
		if !slices.ContainsFunc(out, func(w wantedConfig) bool { return w.key() == o.key() }) {
			out = append(out, o)
		}
	}
	return sortConfigs(out)
}

// sortConfigs orders by group, then resource (as OCM lists configReferences), keeping the order
// within a group and resource.
func sortConfigs(cs []wantedConfig) []wantedConfig {
	slices.SortStableFunc(cs, func(a, b wantedConfig) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
	})
	return cs
}

// SpecHash is OCM's hash of a configuration object: the SHA-256, in hex, of the JSON encoding of
// its spec as the API server returns it (maps encode with sorted keys, so it does not depend on
// field order). An object without a spec has no hash.
func SpecHash(obj *unstructured.Unstructured) (string, error) {
	spec, ok := obj.Object["spec"]
	if !ok {
		return "", fmt.Errorf("%s %s has no spec to hash", obj.GetKind(), obj.GetName())
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(raw)), nil
}

// hashes are the spec hashes of configuration objects; a key without a hash did not resolve, and
// problems says why.
type hashes struct {
	hash     map[configKey]string
	problems map[configKey]string
}

// resolve turns wanted configs into ConfigReferences with their desired spec hash; problems
// lists, for each config that did not resolve, the field that named it and why.
func (h hashes) resolve(ws []wantedConfig) (refs []addonv1alpha1.ConfigReference, problems []string) {
	for _, w := range ws {
		k := w.key()
		if p, bad := h.problems[k]; bad {
			problems = append(problems, fmt.Sprintf("%s names %s, which %s", w.Field, k, p))
			continue
		}
		refs = append(refs, addonv1alpha1.ConfigReference{
			ConfigGroupResource: w.ConfigGroupResource,
			ConfigReferent:      w.ConfigReferent,
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: w.ConfigReferent, SpecHash: h.hash[k]},
		})
	}
	return refs, problems
}

// mergeConfigReferences is status.configReferences with desired as the desired configurations: a
// reference to an object still desired keeps its lastAppliedConfig (so that the rollout can tell
// applied from desired), others go, new ones are added; ordered by group and resource.
func mergeConfigReferences(current, desired []addonv1alpha1.ConfigReference) []addonv1alpha1.ConfigReference {
	out := make([]addonv1alpha1.ConfigReference, 0, len(desired))
	for _, d := range desired {
		ref := *d.DeepCopy()
		for _, c := range current {
			if c.ConfigGroupResource == d.ConfigGroupResource && c.DesiredConfig != nil && c.DesiredConfig.ConfigReferent == d.DesiredConfig.ConfigReferent {
				ref.LastAppliedConfig = c.LastAppliedConfig.DeepCopy()
				ref.LastObservedGeneration = c.LastObservedGeneration
				break
			}
		}
		out = append(out, ref)
	}
	slices.SortStableFunc(out, func(a, b addonv1alpha1.ConfigReference) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
	})
	return out
}
