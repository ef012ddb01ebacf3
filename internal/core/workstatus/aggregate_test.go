package workstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// manifest builds a ManifestCondition for a Job or Deployment at ordinal i with the given
// conditions ("Type=Status[/Reason][@gen]" shorthand kept out: plain conditions read better).
func manifest(i int32, kind, name string, conds ...metav1.Condition) workv1.ManifestCondition {
	return workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Ordinal: i, Kind: kind, Name: name, Namespace: "ml"},
		Conditions:   conds,
	}
}

func cond(t string, s metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen}
}

// status is a condition's type, status and reason, what the aggregation decides.
type status struct{ Type, Status, Reason, Message string }

func statuses(cs []metav1.Condition) []status {
	out := make([]status, 0, len(cs))
	for _, c := range cs {
		out = append(out, status{c.Type, string(c.Status), c.Reason, c.Message})
	}
	return out
}

func TestAggregate(t *testing.T) {
	const gen = 2
	T, F, U := metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown
	applied := cond(workv1.ManifestApplied, T, "AppliedManifestComplete", "applied", gen)
	available := cond(workv1.ManifestAvailable, T, ReasonResourceAvailable, "exists", gen)
	complete := func(s metav1.ConditionStatus, msg string) metav1.Condition {
		return cond(workv1.ManifestComplete, s, ReasonRuleEvaluated, msg, gen)
	}
	const (
		progressingFalse = "Every manifest is applied at the work's generation"
		degradedFalse    = "No manifest failed to apply or went missing"
	)
	ok := []status{
		{"Applied", "True", ReasonAppliedComplete, "Apply manifest work complete"},
		{"Available", "True", ReasonResourcesAvailable, "All resources are available"},
		{"Progressing", "False", ReasonApplied, progressingFalse},
		{"Degraded", "False", ReasonManifestsHealthy, degradedFalse},
	}
	cases := map[string]struct {
		manifests []workv1.ManifestCondition
		want      []status
	}{
		"all applied and available": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Namespace", "ml", applied, available),
				manifest(1, "Deployment", "web", applied, available),
			},
			want: ok,
		},
		"no manifests": {
			want: []status{
				{"Applied", "True", ReasonAppliedComplete, "Apply manifest work complete"},
				{"Available", "Unknown", ReasonStatusUnknown, "The work has no resources to be available"},
				{"Progressing", "False", ReasonApplied, progressingFalse},
				{"Degraded", "False", ReasonManifestsHealthy, degradedFalse},
			},
		},
		"one failed to apply": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Deployment", "web", applied, available),
				manifest(1, "Gadget", "g", cond(workv1.ManifestApplied, F, "AppliedManifestFailed", `no matches for kind "Gadget"`, gen)),
			},
			want: []status{
				{"Applied", "False", ReasonAppliedFailed, `1 of 2 manifests failed to apply: manifests[1] Gadget ml/g (no matches for kind "Gadget")`},
				{"Available", "Unknown", ReasonStatusUnknown, "1 of 2 resources have unknown status: manifests[1] Gadget ml/g (not reported yet)"},
				{"Progressing", "False", ReasonApplied, progressingFalse},
				{"Degraded", "True", ReasonManifestsFailing, `1 of 2 manifests failed: manifests[1] Gadget ml/g (not applied: no matches for kind "Gadget")`},
			},
		},
		"not yet applied, and applied at an older generation": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Deployment", "web", cond(workv1.ManifestApplied, T, "AppliedManifestComplete", "applied", 1), available),
				manifest(1, "Job", "train"),
			},
			want: []status{
				{"Applied", "Unknown", ReasonAppliedPending, "1 of 2 manifests are not applied yet: manifests[1] Job ml/train (not reported yet)"},
				{"Available", "Unknown", ReasonStatusUnknown, "1 of 2 resources have unknown status: manifests[1] Job ml/train (not reported yet)"},
				{"Progressing", "True", ReasonApplying, "2 of 2 manifests are being applied: manifests[0] Deployment ml/web (applied at generation 1 of 2); manifests[1] Job ml/train (not applied yet)"},
				{"Degraded", "False", ReasonManifestsHealthy, degradedFalse},
			},
		},
		"deleted on the spoke": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Deployment", "web", applied, cond(workv1.ManifestAvailable, F, ReasonResourceNotAvailable, "gone", gen)),
			},
			want: []status{
				{"Applied", "True", ReasonAppliedComplete, "Apply manifest work complete"},
				{"Available", "False", ReasonNotAvailable, "1 of 1 resources are not available: manifests[0] Deployment ml/web (gone)"},
				{"Progressing", "False", ReasonApplied, progressingFalse},
				{"Degraded", "True", ReasonManifestsFailing, "1 of 1 manifests failed: manifests[0] Deployment ml/web (not available: gone)"},
			},
		},
		"one Complete rule, complete: the rule's message, as OCM": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Job", "train", applied, available, complete(T, "Job is finished")),
			},
			want: append(ok[:4:4], status{"Complete", "True", ReasonRulesAggregated, "Job is finished"}),
		},
		"Complete needs every manifest with a Complete rule": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Namespace", "ml", applied, available),
				manifest(1, "Job", "prep", applied, available, complete(T, "Job is finished")),
				manifest(2, "Job", "train", applied, available, complete(F, "Job is not finished")),
			},
			want: append(ok[:4:4], status{"Complete", "False", ReasonRulesAggregated, "1 of 2 manifests are not Complete: manifests[2] Job ml/train (Job is not finished)"}),
		},
		"all complete": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Job", "prep", applied, available, complete(T, "Job is finished")),
				manifest(1, "Job", "train", applied, available, complete(T, "Job is finished")),
			},
			want: append(ok[:4:4], status{"Complete", "True", ReasonRulesAggregated, "2 of 2 manifests are Complete: manifests[0] Job ml/prep (Job is finished); manifests[1] Job ml/train (Job is finished)"}),
		},
		"Complete with an errored rule is False": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Job", "train", applied, available, cond(workv1.ManifestComplete, F, ReasonRuleExpressionError, "bad", gen)),
			},
			want: append(ok[:4:4], status{"Complete", "False", ReasonRulesAggregated, "bad"}),
		},
		"Complete unknown": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Job", "a", applied, available, complete(T, "done")),
				manifest(1, "Job", "b", applied, available, complete(U, "?")),
			},
			want: append(ok[:4:4], status{"Complete", "Unknown", ReasonRulesAggregated, "1 of 2 manifests have an unknown Complete: manifests[1] Job ml/b (?)"}),
		},
		"rule Progressing: True wins, and replaces the derived one": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Deployment", "a", applied, available, cond(workv1.ManifestProgressing, T, ReasonRuleEvaluated, "rolling", gen)),
				manifest(1, "Deployment", "b", applied, available, cond(workv1.ManifestProgressing, F, ReasonRuleEvaluated, "steady", gen)),
			},
			want: []status{ok[0], ok[1], ok[3], {"Progressing", "True", ReasonRulesAggregated, "1 of 2 manifests are Progressing: manifests[0] Deployment ml/a (rolling)"}},
		},
		"rule Degraded false everywhere": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Deployment", "a", applied, available, cond(workv1.ManifestDegraded, F, ReasonRuleEvaluated, "fine", gen)),
			},
			want: []status{ok[0], ok[1], ok[2], {"Degraded", "False", ReasonRulesAggregated, "fine"}},
		},
		"custom rule conditions are aggregated after the well-known ones, and conditions not set by rules are not": {
			manifests: []workv1.ManifestCondition{
				manifest(0, "Deployment", "a", applied, available,
					cond("Ready", T, ReasonRuleEvaluated, "ready", gen),
					cond("Scaled", F, ReasonRuleEvaluated, "2 of 3", gen),
					cond(workv1.ManifestStatusFeedbackSynced, T, ReasonStatusFeedbackOK, "", gen),
					complete(T, "done")),
			},
			want: append(ok[:4:4],
				status{"Complete", "True", ReasonRulesAggregated, "done"},
				status{"Ready", "True", ReasonRulesAggregated, "ready"},
				status{"Scaled", "False", ReasonRulesAggregated, "2 of 3"}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Aggregate(tc.manifests, gen)
			if diff := cmp.Diff(tc.want, statuses(got)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			for _, c := range got {
				if c.ObservedGeneration != gen || !c.LastTransitionTime.IsZero() {
					t.Errorf("%s: observedGeneration %d, lastTransitionTime %v; want %d and none", c.Type, c.ObservedGeneration, c.LastTransitionTime, gen)
				}
			}
		})
	}
}

func TestAggregateListsAtMostFive(t *testing.T) {
	var ms []workv1.ManifestCondition
	for i := range int32(7) {
		ms = append(ms, manifest(i, "ConfigMap", "c", cond(workv1.ManifestApplied, metav1.ConditionFalse, "x", "no", 1)))
	}
	got := Aggregate(ms, 1)[0].Message
	want := "7 of 7 manifests failed to apply: manifests[0] ConfigMap ml/c (no); manifests[1] ConfigMap ml/c (no); manifests[2] ConfigMap ml/c (no); manifests[3] ConfigMap ml/c (no); manifests[4] ConfigMap ml/c (no); and 2 more"
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
