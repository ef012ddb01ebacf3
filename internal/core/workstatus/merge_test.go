package workstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func TestMerge(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Hour))
	at := func(c metav1.Condition, ts metav1.Time) metav1.Condition { c.LastTransitionTime = ts; return c }
	applied := cond(workv1.WorkApplied, metav1.ConditionTrue, ReasonAppliedComplete, "ok", 1)
	deleting := cond(workv1.WorkDeleting, metav1.ConditionTrue, "Deleting", "bye", 1)
	oldRule := cond("Ready", metav1.ConditionTrue, ReasonRulesAggregated, "ready", 1)
	cases := map[string]struct {
		existing, desired, want []metav1.Condition
	}{
		"new conditions get now": {
			desired: []metav1.Condition{applied},
			want:    []metav1.Condition{at(applied, now)},
		},
		"unchanged status keeps its transition time, other fields are updated": {
			existing: []metav1.Condition{at(applied, t0)},
			desired:  []metav1.Condition{cond(workv1.WorkApplied, metav1.ConditionTrue, ReasonAppliedComplete, "still ok", 2)},
			want:     []metav1.Condition{at(cond(workv1.WorkApplied, metav1.ConditionTrue, ReasonAppliedComplete, "still ok", 2), t0)},
		},
		"changed status moves the transition time": {
			existing: []metav1.Condition{at(applied, t0)},
			desired:  []metav1.Condition{cond(workv1.WorkApplied, metav1.ConditionFalse, ReasonAppliedFailed, "no", 2)},
			want:     []metav1.Condition{at(cond(workv1.WorkApplied, metav1.ConditionFalse, ReasonAppliedFailed, "no", 2), now)},
		},
		"other writers' conditions stay, removed rules' conditions go": {
			existing: []metav1.Condition{at(deleting, t0), at(oldRule, t0), at(applied, t0)},
			desired:  []metav1.Condition{applied},
			want:     []metav1.Condition{at(deleting, t0), at(applied, t0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Merge(tc.existing, tc.desired, now)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestChanged(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	base := func() workv1.ManifestWorkStatus {
		return workv1.ManifestWorkStatus{
			Conditions: []metav1.Condition{
				{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: ReasonAppliedComplete, ObservedGeneration: 1, LastTransitionTime: t0},
				{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: ReasonResourcesAvailable, ObservedGeneration: 1, LastTransitionTime: t0},
			},
			ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{{
				ResourceMeta:    workv1.ManifestResourceMeta{Ordinal: 0, Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Name: "train", Namespace: "ml"},
				StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{intValue("JobSucceeded", 1)}},
				Conditions:      []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: 1, LastTransitionTime: t0}},
			}}},
		}
	}
	cases := map[string]struct {
		edit func(*workv1.ManifestWorkStatus)
		want bool
	}{
		"identical":            {edit: func(*workv1.ManifestWorkStatus) {}, want: false},
		"transition time only": {edit: func(s *workv1.ManifestWorkStatus) { s.Conditions[0].LastTransitionTime = metav1.Now() }, want: false},
		"conditions reordered": {edit: func(s *workv1.ManifestWorkStatus) {
			s.Conditions[0], s.Conditions[1] = s.Conditions[1], s.Conditions[0]
		}, want: false},
		"feedback values cleared":   {edit: func(s *workv1.ManifestWorkStatus) { s.ResourceStatus.Manifests[0].StatusFeedbacks.Values = nil }, want: true},
		"work conditions cleared":   {edit: func(s *workv1.ManifestWorkStatus) { s.Conditions = []metav1.Condition{} }, want: true},
		"work condition status":     {edit: func(s *workv1.ManifestWorkStatus) { s.Conditions[1].Status = metav1.ConditionFalse }, want: true},
		"work condition message":    {edit: func(s *workv1.ManifestWorkStatus) { s.Conditions[1].Message = "x" }, want: true},
		"work condition generation": {edit: func(s *workv1.ManifestWorkStatus) { s.Conditions[1].ObservedGeneration = 2 }, want: true},
		"work condition added": {edit: func(s *workv1.ManifestWorkStatus) {
			s.Conditions = append(s.Conditions, metav1.Condition{Type: "Complete"})
		}, want: true},
		"feedback value": {edit: func(s *workv1.ManifestWorkStatus) {
			*s.ResourceStatus.Manifests[0].StatusFeedbacks.Values[0].Value.Integer = 2
		}, want: true},
		"manifest condition reason": {edit: func(s *workv1.ManifestWorkStatus) { s.ResourceStatus.Manifests[0].Conditions[0].Reason = "x" }, want: true},
		"manifest condition time only": {edit: func(s *workv1.ManifestWorkStatus) {
			s.ResourceStatus.Manifests[0].Conditions[0].LastTransitionTime = metav1.Now()
		}, want: false},
		"resource meta": {edit: func(s *workv1.ManifestWorkStatus) { s.ResourceStatus.Manifests[0].ResourceMeta.Ordinal = 1 }, want: true},
		"manifest added": {edit: func(s *workv1.ManifestWorkStatus) {
			s.ResourceStatus.Manifests = append(s.ResourceStatus.Manifests, workv1.ManifestCondition{})
		}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			updated := base()
			tc.edit(&updated)
			if got := Changed(base(), updated); got != tc.want {
				t.Errorf("Changed = %v, want %v", got, tc.want)
			}
		})
	}
}
