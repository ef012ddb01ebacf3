package addon

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

func TestLeaseHealth(t *testing.T) {
	renewed := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	const window = 5 * time.Minute
	type result struct {
		Status metav1.ConditionStatus
		Reason string
		Holds  time.Duration
	}
	cases := map[string]struct {
		exists  bool
		renewed *time.Time
		// after is the fake clock's time since the renewal.
		after time.Duration
		want  result
	}{
		"just renewed":               {exists: true, renewed: &renewed, want: result{metav1.ConditionTrue, ReasonLeaseUpdated, window}},
		"renewed a minute ago":       {exists: true, renewed: &renewed, after: time.Minute, want: result{metav1.ConditionTrue, ReasonLeaseUpdated, 4 * time.Minute}},
		"last instant of the window": {exists: true, renewed: &renewed, after: window - time.Nanosecond, want: result{metav1.ConditionTrue, ReasonLeaseUpdated, time.Nanosecond}},
		"end of the window":          {exists: true, renewed: &renewed, after: window, want: result{metav1.ConditionUnknown, ReasonLeaseStopped, 0}},
		"long stopped":               {exists: true, renewed: &renewed, after: time.Hour, want: result{metav1.ConditionUnknown, ReasonLeaseStopped, 0}},
		"never renewed":              {exists: true, want: result{metav1.ConditionUnknown, ReasonLeaseStopped, 0}},
		"no lease":                   {want: result{metav1.ConditionUnknown, ReasonLeaseNotFound, 0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(renewed)
			clk.Step(tc.after)
			cond, holds := leaseHealth("scorer", tc.exists, tc.renewed, clk.Now(), window)
			if cond.Type != addonv1alpha1.ManagedClusterAddOnConditionAvailable {
				t.Errorf("condition type %q, want Available", cond.Type)
			}
			if diff := cmp.Diff(tc.want, result{cond.Status, cond.Reason, holds}); diff != "" {
				t.Errorf("leaseHealth (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsesLease(t *testing.T) {
	got := map[addonv1alpha1.HealthCheckMode]bool{}
	for _, m := range []addonv1alpha1.HealthCheckMode{"", addonv1alpha1.HealthCheckModeLease, addonv1alpha1.HealthCheckModeCustomized} {
		got[m] = usesLease(&addonv1alpha1.ManagedClusterAddOn{Status: addonv1alpha1.ManagedClusterAddOnStatus{HealthCheck: addonv1alpha1.HealthCheck{Mode: m}}})
	}
	want := map[addonv1alpha1.HealthCheckMode]bool{"": true, addonv1alpha1.HealthCheckModeLease: true, addonv1alpha1.HealthCheckModeCustomized: false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usesLease by mode (-want +got):\n%s", diff)
	}
}

func TestHasCondition(t *testing.T) {
	cond := metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: ReasonLeaseUpdated, Message: "scorer add-on is available."}
	stored := cond
	stored.ObservedGeneration = 3
	stored.LastTransitionTime = metav1.NewTime(time.Unix(1, 0))
	mca := func(gen int64) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: []metav1.Condition{stored}},
		}
	}
	other := cond
	other.Status = metav1.ConditionUnknown
	got := []bool{hasCondition(mca(3), cond), hasCondition(mca(4), cond), hasCondition(mca(3), other)}
	if diff := cmp.Diff([]bool{true, false, false}, got); diff != "" {
		t.Errorf("hasCondition: same, newer generation, other status (-want +got):\n%s", diff)
	}
}
