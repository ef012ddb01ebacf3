package work

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// Reasons of the work's Applied condition.
const (
	ReasonWorkApplied    = "AppliedManifestWorkComplete"
	ReasonWorkNotApplied = "AppliedManifestWorkFailed"
)

// manifestStatus is the one place a manifest's status is computed: from the apply outcome and
// the live object on the spoke, starting from the status last written (old, nil for a new
// manifest) so that conditions keep their lastTransitionTime while their status holds.
func manifestStatus(old *workv1.ManifestCondition, o outcome, generation int64, now time.Time) workv1.ManifestCondition {
	mc := workv1.ManifestCondition{ResourceMeta: o.Meta}
	if old != nil && old.ResourceMeta == o.Meta {
		mc.Conditions = append(mc.Conditions, old.Conditions...)
		mc.StatusFeedbacks = old.StatusFeedbacks
	}
	setCondition(&mc.Conditions, o.Applied, generation, now)
	if mc.Conditions == nil {
		mc.Conditions = []metav1.Condition{}
	}
	return mc
}

// setCondition sets c, keeping the lastTransitionTime of a condition whose status holds.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, generation int64, now time.Time) {
	c.ObservedGeneration = generation
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	meta.SetStatusCondition(conds, c)
}

// workStatus computes the work's status from the outcomes of its manifests, in manifest order.
func workStatus(old workv1.ManifestWorkStatus, outcomes []outcome, generation int64, now time.Time) workv1.ManifestWorkStatus {
	byOrdinal := map[int32]*workv1.ManifestCondition{}
	for i := range old.ResourceStatus.Manifests {
		m := &old.ResourceStatus.Manifests[i]
		byOrdinal[m.ResourceMeta.Ordinal] = m
	}
	st := workv1.ManifestWorkStatus{Conditions: append([]metav1.Condition(nil), old.Conditions...)}
	for _, o := range outcomes {
		st.ResourceStatus.Manifests = append(st.ResourceStatus.Manifests, manifestStatus(byOrdinal[o.Meta.Ordinal], o, generation, now))
	}
	aggregate(&st, generation, now)
	return st
}

// aggregate sets the work's Applied condition: True when every manifest is applied.
func aggregate(st *workv1.ManifestWorkStatus, generation int64, now time.Time) {
	var notApplied []int32
	for _, m := range st.ResourceStatus.Manifests {
		if !meta.IsStatusConditionTrue(m.Conditions, workv1.ManifestApplied) {
			notApplied = append(notApplied, m.ResourceMeta.Ordinal)
		}
	}
	c := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: ReasonWorkApplied, Message: "all manifests are applied"}
	if len(notApplied) > 0 {
		c = metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionFalse, Reason: ReasonWorkNotApplied,
			Message: fmt.Sprintf("%d of %d manifests are not applied (ordinals %v)", len(notApplied), len(st.ResourceStatus.Manifests), notApplied)}
	}
	setCondition(&st.Conditions, c, generation, now)
}

// statusChanged reports whether the status to write differs from the status on the hub.
func statusChanged(old, new workv1.ManifestWorkStatus) bool {
	return !equality.Semantic.DeepEqual(old, new)
}
