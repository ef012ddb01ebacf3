package work

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/core/workstatus"
)

// manifestStatus is the one place a manifest's status is computed: the Applied condition from the
// apply outcome, and Available, the condition rules' conditions, StatusFeedbackSynced and the
// feedback values from the live object on the spoke (workstatus). It starts from the status last
// written (old, nil for a new manifest) so that conditions keep their lastTransitionTime while
// their status holds.
func manifestStatus(old *workv1.ManifestCondition, o outcome, generation int64, now time.Time) workv1.ManifestCondition {
	mc := workv1.ManifestCondition{ResourceMeta: o.Meta}
	var existing []metav1.Condition
	if old != nil && old.ResourceMeta == o.Meta {
		existing = old.Conditions
	}
	a := o.Applied
	a.ObservedGeneration = generation
	desired := []metav1.Condition{a}
	var rules []workv1.ConditionRule
	var feedback []workv1.FeedbackRule
	if o.Config != nil {
		rules, feedback = o.Config.ConditionRules, o.Config.FeedbackRules
	}
	if o.Meta.Resource != "" {
		desired = append(desired, workstatus.Conditions(o.Live, rules, generation)...)
	}
	if o.Live != nil {
		values, synced := workstatus.Feedback(o.Live, feedback)
		synced.ObservedGeneration = generation
		mc.StatusFeedbacks.Values = values
		desired = append(desired, synced)
	}
	mc.Conditions = workstatus.Merge(existing, desired, metav1.NewTime(now.Truncate(time.Second)))
	return mc
}

// workStatus computes the work's status from the outcomes of its manifests, in manifest order,
// and the work's conditions from theirs (workstatus.Aggregate).
func workStatus(old workv1.ManifestWorkStatus, outcomes []outcome, generation int64, now time.Time) workv1.ManifestWorkStatus {
	byOrdinal := map[int32]*workv1.ManifestCondition{}
	for i := range old.ResourceStatus.Manifests {
		m := &old.ResourceStatus.Manifests[i]
		byOrdinal[m.ResourceMeta.Ordinal] = m
	}
	var st workv1.ManifestWorkStatus
	for _, o := range outcomes {
		st.ResourceStatus.Manifests = append(st.ResourceStatus.Manifests, manifestStatus(byOrdinal[o.Meta.Ordinal], o, generation, now))
	}
	st.Conditions = workstatus.Merge(old.Conditions, workstatus.Aggregate(st.ResourceStatus.Manifests, generation), metav1.NewTime(now.Truncate(time.Second)))
	return st
}

// statusChanged reports whether the status to write differs from the status on the hub.
func statusChanged(old, new workv1.ManifestWorkStatus) bool { return workstatus.Changed(old, new) }
