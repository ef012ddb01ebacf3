package addontemplate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// Reasons of the ManifestApplied condition (OCM's).
const (
	ReasonManifestsApplied     = "AddonManifestApplied"
	ReasonManifestsApplyFailed = "AddonManifestAppliedFailed"
	ReasonWorkApplyFailed      = "ManifestWorkApplyFailed"
	// ReasonTemplateInvalid is Flotilla's: the template cannot be rendered for this cluster (an
	// undefined variable, a manifest that is not an object); the message names the manifest.
	ReasonTemplateInvalid = "AddOnTemplateInvalid"
	// ReasonConfigurationNotAllowed is Flotilla's: status.configReferences names a configuration
	// the hub did not choose for this add-on (agents may write status), or an AddOnTemplate of
	// another add-on; nothing is deployed from it and the add-on's work is left as it was.
	ReasonConfigurationNotAllowed = "ConfigurationNotAllowed"
	// ReasonConfigurationInvalid is Flotilla's: the add-on's own check (Reconciler.Checks)
	// refused what its agent would be rendered from; the message names the field and the fix,
	// and the add-on's work is left as it was.
	ReasonConfigurationInvalid = "ConfigurationInvalid"
)

// Reasons of the Available condition of a template add-on (OCM's work-based health check).
const (
	ReasonWorkNotFound     = "WorkNotFound"
	ReasonWorkNotApplied   = "WorkNotApplied"
	ReasonNoProbeResult    = "NoProbeResult"
	ReasonProbeUnavailable = "ProbeUnavailable"
	ReasonProbeAvailable   = "ProbeAvailable"
)

// Reasons of the RegistrationApplied condition (OCM's).
const (
	ReasonSetPermissionApplied = "SetPermissionApplied"
	ReasonSetPermissionFailed  = "SetPermissionFailed"
)

// manifestApplied is the ManifestApplied condition from the agent's ManifestWork, as OCM's addon
// deploy controller sets it: nil while the work agent has not reported Applied yet.
func manifestApplied(work *workv1.ManifestWork) *metav1.Condition {
	if work == nil {
		return nil
	}
	c := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
	switch {
	case c == nil:
		return nil
	case c.Status == metav1.ConditionTrue:
		return &metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied, Status: metav1.ConditionTrue,
			Reason: ReasonManifestsApplied, Message: "manifests of addon are applied successfully"}
	default:
		msg := "failed to apply the manifests of addon"
		if c.Message != "" {
			msg += ": " + c.Message
		}
		return &metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied, Status: metav1.ConditionFalse,
			Reason: ReasonManifestsApplyFailed, Message: msg}
	}
}

// available is the Available condition of a template add-on from its ManifestWork, as OCM's
// health check does it for the WorkloadAvailability prober: Unknown without a work or before it
// is applied, False when it failed to apply, Unknown until the work agent returns the
// workloads' status feedback, then True when every Deployment and DaemonSet has a ready replica
// (or wants none), False naming the first that has not.
func available(addon string, work *workv1.ManifestWork, workloads []workv1.ResourceIdentifier) metav1.Condition {
	c := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable}
	set := func(s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		c.Status, c.Reason, c.Message = s, reason, msg
		return c
	}
	if work == nil {
		return set(metav1.ConditionUnknown, ReasonWorkNotFound, "Addon manifestWork is not found")
	}
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
	switch {
	case applied == nil:
		return set(metav1.ConditionUnknown, ReasonWorkNotApplied, "Addon manifestWork is not applied")
	case applied.Status != metav1.ConditionTrue:
		return set(metav1.ConditionFalse, ReasonWorkNotApplied, applied.Message)
	}
	probed := 0
	for _, id := range workloads {
		if len(feedback(work, id)) > 0 {
			probed++
		}
	}
	if len(workloads) > 0 && probed == 0 {
		return set(metav1.ConditionUnknown, ReasonNoProbeResult, "Probe results are not returned")
	}
	for _, id := range workloads {
		v := feedback(work, id)
		if len(v) == 0 {
			continue
		}
		if err := workloadAvailable(id, v); err != nil {
			return set(metav1.ConditionFalse, ReasonProbeUnavailable, fmt.Sprintf("Probe addon unavailable with err %v", err))
		}
	}
	return set(metav1.ConditionTrue, ReasonProbeAvailable, addon+" add-on is available.")
}

// feedback is the status feedback the work reports for the object id names.
func feedback(work *workv1.ManifestWork, id workv1.ResourceIdentifier) []workv1.FeedbackValue {
	for _, m := range work.Status.ResourceStatus.Manifests {
		r := m.ResourceMeta
		if r.Group == id.Group && r.Resource == id.Resource && r.Name == id.Name && r.Namespace == id.Namespace {
			return m.StatusFeedbacks.Values
		}
	}
	return nil
}

// workloadAvailable is OCM's WorkloadAvailability check of one Deployment (ReadyReplicas and
// Replicas) or DaemonSet (NumberReady and DesiredNumberScheduled): available when it wants no
// replica or has at least one ready.
func workloadAvailable(id workv1.ResourceIdentifier, values []workv1.FeedbackValue) error {
	readyName, desiredName := "ReadyReplicas", "Replicas"
	if id.Resource == "daemonsets" {
		readyName, desiredName = "NumberReady", "DesiredNumberScheduled"
	}
	ready, desired := int64(-1), int64(-1)
	for _, v := range values {
		if v.Value.Integer == nil {
			continue
		}
		switch v.Name {
		case readyName:
			ready = *v.Value.Integer
		case desiredName:
			desired = *v.Value.Integer
		}
	}
	what := fmt.Sprintf("%s %s/%s", id.Resource, id.Namespace, id.Name)
	switch {
	case desired == -1:
		return fmt.Errorf("%s is not probed for %s", desiredName, what)
	case desired == 0:
		return nil
	case ready == -1:
		return fmt.Errorf("%s is not probed for %s", readyName, what)
	case ready >= 1:
		return nil
	}
	return fmt.Errorf("%s is %d but %s is %d for %s", desiredName, desired, readyName, ready, what)
}
