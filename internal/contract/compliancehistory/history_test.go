package compliancehistory

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

func TestRoundTripAndBound(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	entries := []Entry{{t0, "gpu-west", policyv1.Compliant}, {t0.Add(time.Minute), "gpu-west", policyv1.NonCompliant}, {t0.Add(2 * time.Minute), "gpu-east", ""}}
	got, skipped := Parse(Format(entries) + "garbage line here too\nnot-a-time gpu-west Compliant\n")
	if diff := cmp.Diff(entries, got); diff != "" || skipped != 2 {
		t.Errorf("round trip (-want +got):\n%s; skipped %d, want 2", diff, skipped)
	}
	many := make([]Entry, MaxEntries+5)
	for i := range many {
		many[i] = Entry{At: t0.Add(time.Duration(i) * time.Second), Cluster: "c", State: policyv1.Compliant}
	}
	kept, _ := Parse(Format(many))
	if len(kept) != MaxEntries || !kept[0].At.Equal(many[5].At) {
		t.Errorf("kept %d entries from %v, want the last %d", len(kept), kept[0].At, MaxEntries)
	}
}

func TestChangesAndPeriods(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	at := func(c string) time.Time {
		return map[string]time.Time{"a": t0, "b": t0.Add(time.Second), "c": t0.Add(2 * time.Second)}[c]
	}
	for name, tc := range map[string]struct {
		last, now map[string]policyv1.ComplianceState
		want      []Entry
	}{
		"first reports": {now: map[string]policyv1.ComplianceState{"a": policyv1.Compliant, "b": ""}, want: []Entry{{t0, "a", policyv1.Compliant}}},
		"no change":     {last: map[string]policyv1.ComplianceState{"a": policyv1.Compliant}, now: map[string]policyv1.ComplianceState{"a": policyv1.Compliant}},
		"a change and a departure": {last: map[string]policyv1.ComplianceState{"a": policyv1.Compliant, "c": policyv1.NonCompliant}, now: map[string]policyv1.ComplianceState{"a": policyv1.NonCompliant},
			want: []Entry{{t0, "a", policyv1.NonCompliant}, {t0.Add(2 * time.Second), "c", Gone}}},
		"gone stays gone": {last: map[string]policyv1.ComplianceState{"c": Gone}, now: map[string]policyv1.ComplianceState{}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Changes(tc.last, tc.now, at)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	entries := []Entry{{t0, "gpu-west", policyv1.Compliant}, {t0.Add(time.Hour), "gpu-west", policyv1.NonCompliant},
		{t0.Add(90 * time.Minute), "gpu-west", policyv1.Compliant}, {t0.Add(2 * time.Hour), "gpu-west", Gone}, {t0.Add(3 * time.Hour), "gpu-east", policyv1.NonCompliant}}
	want := []Period{{"gpu-west", policyv1.Compliant, t0, t0.Add(time.Hour)}, {"gpu-west", policyv1.NonCompliant, t0.Add(time.Hour), t0.Add(90 * time.Minute)},
		{"gpu-west", policyv1.Compliant, t0.Add(90 * time.Minute), t0.Add(2 * time.Hour)}, {"gpu-east", policyv1.NonCompliant, t0.Add(3 * time.Hour), time.Time{}}}
	got := Periods(entries)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("periods (-want +got):\n%s", diff)
	}
	if d := got[1].Duration(t0.Add(10 * time.Hour)); d != 30*time.Minute {
		t.Errorf("gpu-west was NonCompliant %v, want 30m", d)
	}
	if d := got[3].Duration(t0.Add(4 * time.Hour)); d != time.Hour {
		t.Errorf("gpu-east's open period: %v, want 1h", d)
	}
}
