package workstatus

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// Reasons of the work conditions Aggregate derives. Applied's and Available's are OCM's, as is
// ConditionRulesAggregated for conditions set by condition rules.
const (
	ReasonAppliedComplete    = "AppliedManifestWorkComplete"
	ReasonAppliedFailed      = "AppliedManifestWorkFailed"
	ReasonAppliedPending     = "AppliedManifestWorkPending"
	ReasonResourcesAvailable = "ResourcesAvailable"
	ReasonNotAvailable       = "ResourcesNotAvailable"
	ReasonStatusUnknown      = "ResourcesStatusUnknown"
	ReasonRulesAggregated    = "ConditionRulesAggregated"
	ReasonApplying           = "ManifestsApplying"
	ReasonApplied            = "ManifestsApplied"
	ReasonManifestsFailing   = "ManifestsFailing"
	ReasonManifestsHealthy   = "ManifestsHealthy"
)

// maxListed bounds how many manifests a work condition's message names.
const maxListed = 5

// Aggregate derives the work's conditions from the per-manifest conditions (manifests as the
// agent reports them, each with its Applied condition set by the agent and those of Conditions):
//
//   - Applied: False when any manifest's Applied is False (naming them), Unknown while any has
//     none yet or Unknown, else True (also for a work without manifests), as OCM.
//   - Available: False when any manifest's Available is False, Unknown when any is Unknown or
//     none is known, else True, as OCM.
//   - Every condition type set by condition rules is aggregated under the same type with reason
//     ConditionRulesAggregated, as OCM: Progressing and Degraded are True when any manifest's is
//     True; any other type (Complete among them) is True only when it is True on every manifest
//     that has it, False when any is False, else Unknown. Complete is therefore present only when
//     some manifest has a Complete rule.
//   - Progressing and Degraded, where no rule sets them (OCM declares them but leaves them to
//     rules; Flotilla derives them): Progressing is True while any manifest is not yet applied at
//     generation (no Applied, Unknown, or an older observedGeneration); Degraded is True when any
//     manifest failed to apply or is not available.
//
// Every condition carries generation as its ObservedGeneration and no LastTransitionTime; write
// them with Merge, which also drops the aggregated conditions of rules that no longer exist.
func Aggregate(manifests []workv1.ManifestCondition, generation int64) []metav1.Condition {
	out := []metav1.Condition{applied(manifests), available(manifests)}
	ruled := ruleConditions(manifests)
	for _, t := range []string{workv1.WorkProgressing, workv1.WorkDegraded} {
		if _, ok := ruled[t]; !ok {
			out = append(out, fallback(t, manifests, generation))
		}
	}
	types := make([]string, 0, len(ruled))
	for t := range ruled {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool {
		return rank(types[i]) < rank(types[j]) || rank(types[i]) == rank(types[j]) && types[i] < types[j]
	})
	for _, t := range types {
		out = append(out, aggregateRule(t, ruled[t]))
	}
	for i := range out {
		out[i].ObservedGeneration = generation
	}
	return out
}

// rank orders the well-known work conditions first, as the API lists them.
func rank(t string) int {
	switch t {
	case workv1.WorkProgressing:
		return 0
	case workv1.WorkDegraded:
		return 1
	case workv1.WorkComplete:
		return 2
	}
	return 3
}

type manifestCond struct {
	m workv1.ManifestCondition
	c metav1.Condition
}

func ruleConditions(manifests []workv1.ManifestCondition) map[string][]manifestCond {
	out := map[string][]manifestCond{}
	for _, m := range manifests {
		for _, c := range m.Conditions {
			if !IsRuleCondition(c) || c.Type == workv1.WorkApplied || c.Type == workv1.WorkAvailable {
				continue
			}
			out[c.Type] = append(out[c.Type], manifestCond{m, c})
		}
	}
	return out
}

func aggregateRule(t string, mcs []manifestCond) metav1.Condition {
	var trues, falses, unknowns []manifestCond
	for _, mc := range mcs {
		switch mc.c.Status {
		case metav1.ConditionTrue:
			trues = append(trues, mc)
		case metav1.ConditionFalse:
			falses = append(falses, mc)
		default:
			unknowns = append(unknowns, mc)
		}
	}
	c := metav1.Condition{Type: t, Reason: ReasonRulesAggregated}
	anyWins := t == workv1.WorkProgressing || t == workv1.WorkDegraded
	switch {
	case anyWins && len(trues) > 0:
		c.Status, c.Message = metav1.ConditionTrue, summary(trues, len(mcs), "are "+t)
	case anyWins && len(unknowns) > 0, !anyWins && len(falses) == 0 && len(unknowns) > 0:
		c.Status, c.Message = metav1.ConditionUnknown, summary(unknowns, len(mcs), "have an unknown "+t)
	case anyWins:
		c.Status, c.Message = metav1.ConditionFalse, summary(falses, len(mcs), "are not "+t)
	case len(falses) > 0:
		c.Status, c.Message = metav1.ConditionFalse, summary(falses, len(mcs), "are not "+t)
	default:
		c.Status, c.Message = metav1.ConditionTrue, summary(trues, len(mcs), "are "+t)
	}
	return c
}

// summary says how many of total manifests are in a state; for a single manifest of a single
// manifest it is the rule's own message (for example "Job is finished"), as OCM shows it.
func summary(mcs []manifestCond, total int, state string) string {
	if total == 1 && len(mcs) == 1 && mcs[0].c.Message != "" {
		return mcs[0].c.Message
	}
	return fmt.Sprintf("%d of %d manifests %s: %s", len(mcs), total, state, list(mcs))
}

func list(mcs []manifestCond) string {
	parts := make([]string, 0, maxListed+1)
	for i, mc := range mcs {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(mcs)-maxListed))
			break
		}
		s := manifestName(mc.m.ResourceMeta)
		if mc.c.Message != "" {
			s += " (" + mc.c.Message + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// manifestName names a manifest by its index and object, as refusals and messages do.
func manifestName(r workv1.ManifestResourceMeta) string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	return fmt.Sprintf("manifests[%d] %s %s", r.Ordinal, r.Kind, name)
}

func by(manifests []workv1.ManifestCondition, t string) (trues, falses, unknowns []manifestCond) {
	for _, m := range manifests {
		c := meta.FindStatusCondition(m.Conditions, t)
		if c == nil {
			unknowns = append(unknowns, manifestCond{m, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Message: "not reported yet"}})
			continue
		}
		switch c.Status {
		case metav1.ConditionTrue:
			trues = append(trues, manifestCond{m, *c})
		case metav1.ConditionFalse:
			falses = append(falses, manifestCond{m, *c})
		default:
			unknowns = append(unknowns, manifestCond{m, *c})
		}
	}
	return trues, falses, unknowns
}

func applied(manifests []workv1.ManifestCondition) metav1.Condition {
	_, falses, unknowns := by(manifests, workv1.ManifestApplied)
	c := metav1.Condition{Type: workv1.WorkApplied}
	switch {
	case len(falses) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonAppliedFailed
		c.Message = fmt.Sprintf("%d of %d manifests failed to apply: %s", len(falses), len(manifests), list(falses))
	case len(unknowns) > 0:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonAppliedPending
		c.Message = fmt.Sprintf("%d of %d manifests are not applied yet: %s", len(unknowns), len(manifests), list(unknowns))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonAppliedComplete
		c.Message = "Apply manifest work complete"
	}
	return c
}

func available(manifests []workv1.ManifestCondition) metav1.Condition {
	trues, falses, unknowns := by(manifests, workv1.ManifestAvailable)
	c := metav1.Condition{Type: workv1.WorkAvailable}
	switch {
	case len(falses) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNotAvailable
		c.Message = fmt.Sprintf("%d of %d resources are not available: %s", len(falses), len(manifests), list(falses))
	case len(unknowns) > 0:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonStatusUnknown
		c.Message = fmt.Sprintf("%d of %d resources have unknown status: %s", len(unknowns), len(manifests), list(unknowns))
	case len(trues) == 0:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonStatusUnknown
		c.Message = "The work has no resources to be available"
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonResourcesAvailable
		c.Message = "All resources are available"
	}
	return c
}

func fallback(t string, manifests []workv1.ManifestCondition, generation int64) metav1.Condition {
	c := metav1.Condition{Type: t, Status: metav1.ConditionFalse}
	var hits []manifestCond
	if t == workv1.WorkProgressing {
		for _, m := range manifests {
			a := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied)
			switch {
			case a == nil:
				hits = append(hits, manifestCond{m, metav1.Condition{Message: "not applied yet"}})
			case a.Status == metav1.ConditionUnknown:
				hits = append(hits, manifestCond{m, *a})
			case a.ObservedGeneration < generation:
				hits = append(hits, manifestCond{m, metav1.Condition{Message: fmt.Sprintf("applied at generation %d of %d", a.ObservedGeneration, generation)}})
			}
		}
		if len(hits) > 0 {
			c.Status, c.Reason = metav1.ConditionTrue, ReasonApplying
			c.Message = fmt.Sprintf("%d of %d manifests are being applied: %s", len(hits), len(manifests), list(hits))
		} else {
			c.Reason, c.Message = ReasonApplied, "Every manifest is applied at the work's generation"
		}
		return c
	}
	for _, m := range manifests {
		if a := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied); a != nil && a.Status == metav1.ConditionFalse {
			hits = append(hits, manifestCond{m, metav1.Condition{Message: "not applied: " + a.Message}})
		} else if v := meta.FindStatusCondition(m.Conditions, workv1.ManifestAvailable); v != nil && v.Status == metav1.ConditionFalse {
			hits = append(hits, manifestCond{m, metav1.Condition{Message: "not available: " + v.Message}})
		}
	}
	if len(hits) > 0 {
		c.Status, c.Reason = metav1.ConditionTrue, ReasonManifestsFailing
		c.Message = fmt.Sprintf("%d of %d manifests failed: %s", len(hits), len(manifests), list(hits))
	} else {
		c.Reason, c.Message = ReasonManifestsHealthy, "No manifest failed to apply or went missing"
	}
	return c
}
