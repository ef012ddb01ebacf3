package addon

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// Allowed are the configurations the hub lets one ManagedClusterAddOn run with, worked out only
// from what the cluster's agents cannot write: the ClusterManagementAddOn (spec, and the install
// progressions in its status, which only the hub writes), the Placements' decisions and the
// ManagedClusterAddOn's spec.configs (agents may read their add-ons but write only their status).
//
// ManagedClusterAddOn status.configReferences is not among them: the hub writes it, but agents
// may write their add-on's status, so an agent could name there another add-on's AddOnTemplate,
// one with broader hubPermissions, or an AddOnDeploymentConfig of another namespace. Whoever
// acts on a configuration named in status.configReferences (the template controller, the custom
// signer) first checks it with Check.
type Allowed struct {
	// Addon and Cluster are the ManagedClusterAddOn's name and namespace.
	Addon, Cluster string
	// Managed: a ClusterManagementAddOn of that name exists; without one the hub chooses no
	// configuration for the add-on, and none is allowed.
	Managed bool
	// fields names, for each allowed configuration, where it is named.
	fields map[configKey][]string
}

// AllowedConfigs reads what decides the configurations of mca and returns those the hub allows:
//
//   - the desired ones, as the lifecycle controller computes them (configs.go): the
//     ClusterManagementAddOn's defaults, overridden by the configs of the install placement that
//     serves the cluster, overridden by mca's spec.configs;
//   - during a rollout, those the hub recorded as applied to (or last known good for) that
//     placement's clusters: ClusterManagementAddOn status.installProgressions[].configReferences
//     lastAppliedConfig and lastKnownGoodConfig. An add-on the rollout has not reached yet still
//     runs them.
//
// An add-on still running a configuration that is neither (its spec.configs changed, or a second
// change came before the first reached it) is refused until the rollout reaches it.
func AllowedConfigs(ctx context.Context, c client.Reader, mca *addonv1alpha1.ManagedClusterAddOn) (*Allowed, error) {
	a := &Allowed{Addon: mca.Name, Cluster: mca.Namespace, fields: map[configKey][]string{}}
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Name: mca.Name}, cma); err != nil {
		if apierrors.IsNotFound(err) {
			return a, nil
		}
		return nil, err
	}
	a.Managed = true
	views, err := readPlacements(ctx, c, cma)
	if err != nil {
		return nil, err
	}
	i := servedClusters(views).placementOf(mca.Namespace)
	for _, w := range addonConfigs(cma, placementConfigs(cma, i), mca) {
		a.add(w.key(), w.Field)
	}
	if i == noPlacement {
		return a, nil
	}
	for k, p := range cma.Status.InstallProgressions {
		if p.PlacementRef != views[i].PlacementRef {
			continue
		}
		for j, ref := range p.ConfigReferences {
			// In this order: the message that names them is compared when status is written.
			for _, f := range []struct {
				name string
				spec *addonv1alpha1.ConfigSpecHash
			}{{"lastAppliedConfig", ref.LastAppliedConfig}, {"lastKnownGoodConfig", ref.LastKnownGoodConfig}} {
				if f.spec != nil {
					a.add(configKey{ref.ConfigGroupResource, f.spec.ConfigReferent},
						fmt.Sprintf("ClusterManagementAddOn %s status.installProgressions[%d].configReferences[%d].%s", cma.Name, k, j, f.name))
				}
			}
		}
	}
	return a, nil
}

func (a *Allowed) add(k configKey, field string) {
	if !slices.Contains(a.fields[k], field) {
		a.fields[k] = append(a.fields[k], field)
	}
}

// Permits says whether the configuration of group and resource gr named ref is allowed.
func (a *Allowed) Permits(gr addonv1alpha1.ConfigGroupResource, ref addonv1alpha1.ConfigReferent) bool {
	return len(a.fields[configKey{gr, ref}]) > 0
}

// Check returns an error naming each configuration in mca's status.configReferences (desired
// ones) that the hub does not allow, where the allowed ones are named, and the fix; nil when all
// are allowed.
func (a *Allowed) Check(mca *addonv1alpha1.ManagedClusterAddOn) error {
	var bad []string
	for i, c := range mca.Status.ConfigReferences {
		if c.DesiredConfig == nil || a.Permits(c.ConfigGroupResource, c.DesiredConfig.ConfigReferent) {
			continue
		}
		k := configKey{c.ConfigGroupResource, c.DesiredConfig.ConfigReferent}
		bad = append(bad, fmt.Sprintf("status.configReferences[%d].desiredConfig names %s, which %s", i, k, a.allowedOf(c.ConfigGroupResource)))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("ManagedClusterAddOn %s/%s: %s; the hub does not use a configuration it did not choose (agents may write status): "+
		"name the configuration in the ClusterManagementAddOn (spec.supportedConfigs[].defaultConfig, spec.installStrategy.placements[].configs) "+
		"or in the ManagedClusterAddOn's spec.configs, and the hub rewrites status.configReferences as the rollout reaches the cluster",
		a.Cluster, a.Addon, strings.Join(bad, "; "))
}

// allowedOf says which configurations of gr are allowed, and where they are named.
func (a *Allowed) allowedOf(gr addonv1alpha1.ConfigGroupResource) string {
	if !a.Managed {
		return fmt.Sprintf("no ClusterManagementAddOn %s names (there is none)", a.Addon)
	}
	var ok []string
	for k, fields := range a.fields {
		if k.ConfigGroupResource == gr {
			ok = append(ok, fmt.Sprintf("%s (%s)", k, strings.Join(fields, ", ")))
		}
	}
	if len(ok) == 0 {
		return "is of a kind the hub configures none of for this add-on"
	}
	slices.Sort(ok)
	return "is not the hub's choice for this add-on: " + strings.Join(ok, "; ")
}
