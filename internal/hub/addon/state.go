package addon

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

// Reasons of a ManagedClusterAddOn's Progressing condition, as OCM's addon manager writes them
// (the install progression of a ClusterManagementAddOn uses Installing, InstallSucceed, Upgrading
// and UpgradeSucceed of api/addon/v1alpha1 instead).
const (
	ReasonProgressing               = "Progressing"
	ReasonCompleted                 = "Completed"
	ReasonFailed                    = "Failed"
	ReasonWaitingForManifestApplied = "WaitingForManifestApplied"
)

// Reasons of a ManagedClusterAddOn's Configured condition (OCM's).
const (
	ReasonConfigured    = "ConfigurationsConfigured"
	ReasonNotConfigured = "ConfigurationsNotConfigured"
	// ReasonConfigurationNotFound is Flotilla's: a configuration the add-on should run with does
	// not exist (or cannot be read), so the cluster is not configured until it does.
	ReasonConfigurationNotFound = "ConfigurationNotFound"
)

// ReasonPlacementNotFound is the reason of an install progression's Progressing condition when
// its Placement does not exist (Flotilla's; OCM only logs it).
const ReasonPlacementNotFound = "PlacementNotFound"

// rolloutState is where a ManagedClusterAddOn is in the rollout of its desired configurations,
// decided as OCM's addon manager does (addonconfiguration, setRolloutStatus): ToApply while its
// status.configReferences do not name exactly the desired configurations and hashes; Progressing
// or Failed (by the Progressing condition's reason, since its transition) while one was not yet
// applied (lastAppliedConfig differs); Succeeded once all are applied.
func rolloutState(mca *addonv1alpha1.ManagedClusterAddOn, desired []addonv1alpha1.ConfigReference) rollout.ClusterStatus {
	st := rollout.ClusterStatus{Name: mca.Namespace, Status: rollout.ToApply}
	actual := mca.Status.ConfigReferences
	if len(actual) != len(desired) {
		return st
	}
	progressing := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
	reason := ""
	if progressing != nil {
		reason = progressing.Reason
	}
	for _, a := range actual {
		if a.DesiredConfig == nil {
			return st
		}
		i := slices.IndexFunc(desired, func(d addonv1alpha1.ConfigReference) bool {
			return d.ConfigGroupResource == a.ConfigGroupResource && d.DesiredConfig.ConfigReferent == a.DesiredConfig.ConfigReferent
		})
		if i < 0 || !equality.Semantic.DeepEqual(desired[i].DesiredConfig, a.DesiredConfig) {
			return st
		}
		if equality.Semantic.DeepEqual(a.LastAppliedConfig, a.DesiredConfig) {
			continue
		}
		switch reason {
		case ReasonFailed, addonv1alpha1.ProgressingReasonInstallFailed, addonv1alpha1.ProgressingReasonUpgradeFailed:
			st.Status, st.Since = rollout.Failed, progressing.LastTransitionTime.Time
		case ReasonProgressing, addonv1alpha1.ProgressingReasonInstalling, addonv1alpha1.ProgressingReasonUpgrading:
			st.Status, st.Since = rollout.Progressing, progressing.LastTransitionTime.Time
		default:
			st.Status = rollout.Progressing
		}
		return st
	}
	st.Status = rollout.Succeeded
	switch reason {
	case ReasonCompleted, addonv1alpha1.ProgressingReasonInstallSucceed, addonv1alpha1.ProgressingReasonUpgradeSucceed:
		st.Since = progressing.LastTransitionTime.Time
	}
	return st
}

// owned says whether mca was created by cma: its controller reference is cma (by UID). Only
// those are ever deleted by the hub.
func owned(cma *addonv1alpha1.ClusterManagementAddOn, mca *addonv1alpha1.ManagedClusterAddOn) bool {
	ref := metav1.GetControllerOf(mca)
	return ref != nil && ref.UID == cma.UID && ref.Kind == "ClusterManagementAddOn"
}

// installPlan is what the install strategy changes: clusters that get a ManagedClusterAddOn,
// the hub's ManagedClusterAddOns that go, and clusters that have one the hub did not create.
type installPlan struct {
	Create    []string
	Remove    []*addonv1alpha1.ManagedClusterAddOn
	Conflicts []string
}

// planInstall compares the clusters the placements select (required) with the add-on's
// ManagedClusterAddOns. removeUnselected is false when some placement's decisions could not be
// read: then which clusters left is unknown and nothing is removed. A ManagedClusterAddOn the
// hub did not create is never removed; in a selected cluster it is a conflict, left alone.
func planInstall(cma *addonv1alpha1.ClusterManagementAddOn, required map[string]bool, removeUnselected bool, mcas []*addonv1alpha1.ManagedClusterAddOn) installPlan {
	var p installPlan
	have := map[string]bool{}
	for _, m := range mcas {
		have[m.Namespace] = true
		mine := owned(cma, m)
		switch {
		case required[m.Namespace] && !mine:
			p.Conflicts = append(p.Conflicts, m.Namespace+"/"+m.Name)
		case !required[m.Namespace] && mine && removeUnselected && m.DeletionTimestamp.IsZero():
			p.Remove = append(p.Remove, m)
		}
	}
	for c := range required {
		if !have[c] {
			p.Create = append(p.Create, c)
		}
	}
	slices.Sort(p.Create)
	slices.Sort(p.Conflicts)
	slices.SortFunc(p.Remove, func(a, b *addonv1alpha1.ManagedClusterAddOn) int { return strings.Compare(a.Namespace, b.Namespace) })
	return p
}

// progressionCondition is an install progression's Progressing condition, as OCM words it: True
// (Installing, or Upgrading once a configuration was applied before) with "n/total installing..."
// while not every cluster of the placement runs the desired configurations, then False
// (InstallSucceed or UpgradeSucceed). progressing and done count the placement's add-ons that
// are applying, and have applied, the desired configurations.
func progressionCondition(upgrade bool, progressing, done, total int) metav1.Condition {
	c := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing}
	verb, ing, succeed := "install", addonv1alpha1.ProgressingReasonInstalling, addonv1alpha1.ProgressingReasonInstallSucceed
	if upgrade {
		verb, ing, succeed = "upgrade", addonv1alpha1.ProgressingReasonUpgrading, addonv1alpha1.ProgressingReasonUpgradeSucceed
	}
	if total == 0 || done != total {
		c.Status, c.Reason = metav1.ConditionTrue, ing
		c.Message = fmt.Sprintf("%d/%d %sing...", progressing+done, total, strings.TrimSuffix(verb, "e"))
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, succeed
	c.Message = fmt.Sprintf("%d/%d %s completed with no errors.", done, total, verb)
	return c
}
