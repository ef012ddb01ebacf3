package workstatus

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/core/conditions"
)

// Merge returns existing with desired set in it: a condition whose status did not change keeps
// its LastTransitionTime, any other gets now (the caller's clock). Conditions of existing that
// desired does not name are kept (other writers own them, as the agent owns Applied and
// Deleting), except those set by condition rules (reason ConditionRule...), which belong to rules
// that no longer exist and are dropped, as OCM prunes them.
func Merge(existing, desired []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(existing)+len(desired))
	for _, c := range existing {
		if IsRuleCondition(c) && meta.FindStatusCondition(desired, c.Type) == nil {
			continue
		}
		out = append(out, c)
	}
	for _, c := range desired {
		c.LastTransitionTime = now
		meta.SetStatusCondition(&out, c)
	}
	return out
}

// Changed reports whether a status differs from old in anything a reader would see: the work's
// conditions (type, status, reason, message, observedGeneration, in any order; transition times
// are ignored, since Merge keeps them while the status holds) and, per manifest, its resourceMeta,
// feedback values and conditions. The agent writes status only when Changed is true.
func Changed(old, updated workv1.ManifestWorkStatus) bool {
	if !sameConditions(old.Conditions, updated.Conditions) {
		return true
	}
	a, b := old.ResourceStatus.Manifests, updated.ResourceStatus.Manifests
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].ResourceMeta != b[i].ResourceMeta ||
			!equality.Semantic.DeepEqual(a[i].StatusFeedbacks.Values, b[i].StatusFeedbacks.Values) ||
			!sameConditions(a[i].Conditions, b[i].Conditions) {
			return true
		}
	}
	return false
}

func sameConditions(a, b []metav1.Condition) bool {
	return conditions.Equal(sortedByType(a), sortedByType(b))
}

func sortedByType(cs []metav1.Condition) []metav1.Condition {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(x, y metav1.Condition) int { return strings.Compare(x.Type, y.Type) })
	return out
}
