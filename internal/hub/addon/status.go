package addon

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/conditions"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

// addonView is one ManagedClusterAddOn in one reconcile: the configurations it should run with
// and where it is in their rollout.
type addonView struct {
	MCA *addonv1alpha1.ManagedClusterAddOn
	// Placement is the index in spec.installStrategy.placements of the placement serving its
	// cluster; noPlacement for none.
	Placement int
	// Desired are the resolved desired configurations; Problems the ones that did not resolve.
	Desired  []addonv1alpha1.ConfigReference
	Problems []string
	// SameAsPlacement: Desired are its placement's own (or the defaults, for an add-on no placement
	// serves): the ManagedClusterAddOn's spec overrides none of them.
	SameAsPlacement bool
	State           rollout.ClusterStatus
	// InRollout: the rollout strategy lets the desired configurations reach it now.
	InRollout bool
}

// desiredAddonStatus is mca's status after this reconcile: supportedConfigs from the
// ClusterManagementAddOn; for an add-on the rollout reaches, the desired configurations in
// status.configReferences; and the Configured condition, as OCM's addon manager sets it (True
// once the rollout reached the add-on or it runs the desired configurations, False while it
// waits for the rollout), or False with ConfigurationNotFound naming what did not resolve.
func desiredAddonStatus(cma *addonv1alpha1.ClusterManagementAddOn, v *addonView, now metav1.Time) addonv1alpha1.ManagedClusterAddOnStatus {
	st := *v.MCA.Status.DeepCopy()
	st.SupportedConfigs = supportedKinds(cma)
	set := func(ok bool, reason, msg string) {
		c := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured, Status: metav1.ConditionFalse,
			Reason: reason, Message: msg, ObservedGeneration: v.MCA.Generation, LastTransitionTime: now}
		if ok {
			c.Status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, c)
	}
	switch {
	case len(v.Problems) > 0:
		set(false, ReasonConfigurationNotFound, strings.Join(v.Problems, "; "))
	case v.InRollout:
		st.ConfigReferences = mergeConfigReferences(st.ConfigReferences, v.Desired)
		set(true, ReasonConfigured, "Configurations configured")
	case v.State.Status == rollout.Succeeded:
		set(true, ReasonConfigured, "Configurations configured")
	case v.State.Status == rollout.ToApply:
		set(false, ReasonNotConfigured, "Configurations updated and not configured yet")
	}
	return st
}

// supportedKinds are the kinds of configuration cma supports, as each ManagedClusterAddOn's
// status.supportedConfigs lists them.
func supportedKinds(cma *addonv1alpha1.ClusterManagementAddOn) []addonv1alpha1.ConfigGroupResource {
	var out []addonv1alpha1.ConfigGroupResource
	for _, sc := range cma.Spec.SupportedConfigs {
		out = append(out, sc.ConfigGroupResource)
	}
	return out
}

// addonStatusChanged says whether the hub's part of a ManagedClusterAddOn's status differs.
func addonStatusChanged(old, st addonv1alpha1.ManagedClusterAddOnStatus) bool {
	return !conditions.Same(old.Conditions, st.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured) ||
		!equality.Semantic.DeepEqual(old.ConfigReferences, st.ConfigReferences) ||
		!equality.Semantic.DeepEqual(old.SupportedConfigs, st.SupportedConfigs)
}

// progressionInput is what the install progression of one placement is made from.
type progressionInput struct {
	View placementView
	// Index is the entry's index in spec.installStrategy.placements.
	Index int
	// Desired are the placement's resolved configurations (defaults overridden by its configs);
	// Problems the ones that did not resolve.
	Desired  []addonv1alpha1.ConfigReference
	Problems []string
	Result   rollout.Result
	// RolloutErr is why the rollout could not be decided (a bad rollout strategy).
	RolloutErr string
	Addons     []*addonView
	// Conflicts are ManagedClusterAddOns in the placement's clusters that the hub did not create.
	Conflicts []string
}

// desiredProgression is the install progression of one placement: its configurations with the
// desired spec hashes (lastAppliedConfig and lastKnownGoodConfig kept, and set to the desired
// ones once every cluster runs them) and the Progressing condition with OCM's reasons and counts;
// what holds the rollout (unresolved configs, conflicts, failures) is added to the message.
func desiredProgression(cma *addonv1alpha1.ClusterManagementAddOn, old *addonv1alpha1.InstallProgression, in progressionInput, now metav1.Time) addonv1alpha1.InstallProgression {
	p := addonv1alpha1.InstallProgression{PlacementRef: in.View.PlacementRef}
	if old != nil {
		p.Conditions = slices.Clone(old.Conditions)
	}
	upgrade := false
	for _, d := range in.Desired {
		ref := addonv1alpha1.InstallConfigReference{ConfigGroupResource: d.ConfigGroupResource, DesiredConfig: d.DesiredConfig.DeepCopy()}
		if old != nil {
			for _, o := range old.ConfigReferences {
				if o.ConfigGroupResource == d.ConfigGroupResource {
					ref.LastAppliedConfig, ref.LastKnownGoodConfig = o.LastAppliedConfig.DeepCopy(), o.LastKnownGoodConfig.DeepCopy()
					// An upgrade: another configuration was applied before this one.
					upgrade = upgrade || (o.LastAppliedConfig != nil && !equality.Semantic.DeepEqual(o.LastAppliedConfig, d.DesiredConfig))
				}
			}
		}
		p.ConfigReferences = append(p.ConfigReferences, ref)
	}
	if old != nil && !upgrade {
		// The desired configurations were applied already: the install or upgrade that applied
		// them keeps its name.
		if c := meta.FindStatusCondition(old.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); c != nil {
			upgrade = c.Reason == addonv1alpha1.ProgressingReasonUpgrading || c.Reason == addonv1alpha1.ProgressingReasonUpgradeSucceed
		}
	}
	set := func(c metav1.Condition) {
		c.ObservedGeneration, c.LastTransitionTime = cma.Generation, now
		meta.SetStatusCondition(&p.Conditions, c)
	}
	field := fmt.Sprintf("spec.installStrategy.placements[%d]", in.Index)
	switch {
	case in.View.Missing:
		set(metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonPlacementNotFound,
			Message: fmt.Sprintf("Placement %s/%s (%s) does not exist: create it or name an existing Placement; the add-on is installed on none of its clusters",
				in.View.Namespace, in.View.Name, field)})
		return p
	case in.View.Err != "":
		set(metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonFailed,
			Message: fmt.Sprintf("%s (%s/%s): %s", field, in.View.Namespace, in.View.Name, in.View.Err)})
		return p
	}
	progressing, done := 0, 0
	for _, a := range in.Addons {
		if !a.SameAsPlacement || len(a.Problems) > 0 {
			continue
		}
		switch a.State.Status {
		case rollout.Succeeded:
			done++
		case rollout.Progressing:
			progressing++
		}
	}
	total := len(in.View.Clusters)
	c := progressionCondition(upgrade, progressing, done, total)
	if c.Status == metav1.ConditionFalse {
		for i := range p.ConfigReferences {
			p.ConfigReferences[i].LastAppliedConfig = p.ConfigReferences[i].DesiredConfig.DeepCopy()
			p.ConfigReferences[i].LastKnownGoodConfig = p.ConfigReferences[i].DesiredConfig.DeepCopy()
		}
	}
	if held := holdUps(in, field); held != "" {
		c.Message += " " + held
	}
	set(c)
	return p
}

// holdUps says what keeps a placement's rollout from completing, "" when nothing does.
func holdUps(in progressionInput, field string) string {
	var parts []string
	if len(in.Problems) > 0 {
		parts = append(parts, strings.Join(in.Problems, "; "))
	}
	if in.RolloutErr != "" {
		parts = append(parts, fmt.Sprintf("%s.rolloutStrategy: %s", field, in.RolloutErr))
	}
	if in.Result.MaxFailureBreach {
		parts = append(parts, "stopped: more clusters failed or timed out than maxFailures allows")
	}
	if len(in.Result.TimedOut) > 0 {
		parts = append(parts, "timed out (progressDeadline): "+statusNames(in.Result.TimedOut))
	}
	var failed []rollout.ClusterStatus
	for _, c := range in.Result.ToRollout {
		if c.Status == rollout.Failed {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		parts = append(parts, "failed: "+statusNames(failed))
	}
	var unresolved []string
	for _, a := range in.Addons {
		if len(a.Problems) > 0 && !a.SameAsPlacement {
			unresolved = append(unresolved, a.MCA.Namespace)
		}
	}
	if len(unresolved) > 0 {
		slices.Sort(unresolved)
		parts = append(parts, "configs of these clusters' ManagedClusterAddOns do not resolve (see their Configured condition): "+strings.Join(unresolved, ", "))
	}
	if len(in.Conflicts) > 0 {
		parts = append(parts, "ManagedClusterAddOns not created by this ClusterManagementAddOn, left alone (delete them to have the hub manage these clusters): "+strings.Join(in.Conflicts, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, "; ") + ")"
}

func statusNames(cs []rollout.ClusterStatus) string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// defaultReferences is status.defaultconfigReferences: each default configuration with its spec
// hash (empty when it does not resolve).
func defaultReferences(cma *addonv1alpha1.ClusterManagementAddOn, h hashes) []addonv1alpha1.DefaultConfigReference {
	var out []addonv1alpha1.DefaultConfigReference
	for _, w := range defaultConfigs(cma) {
		out = append(out, addonv1alpha1.DefaultConfigReference{ConfigGroupResource: w.ConfigGroupResource,
			DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: w.ConfigReferent, SpecHash: h.hash[w.key()]}})
	}
	return out
}
