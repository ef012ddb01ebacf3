package kueue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

func TestNominate(t *testing.T) {
	ranked := []string{"a", "b", "c"}
	cases := map[string]struct {
		states  map[string]workloadfit.State // Fits when not given
		current []string
		rounds  int
		holding bool
		want    []string
	}{
		"first round: the best-ranked worker only":           {want: []string{"a"}},
		"second round adds the next":                         {current: []string{"a"}, rounds: 1, want: []string{"a", "b"}},
		"many rounds: every worker, once":                    {current: []string{"a", "b"}, rounds: 9, want: []string{"a", "b", "c"}},
		"a worker where it does not fit is skipped":          {states: map[string]workloadfit.State{"a": workloadfit.NoFit}, want: []string{"b"}},
		"and never offered":                                  {states: map[string]workloadfit.State{"a": workloadfit.NoFit}, current: []string{"b"}, rounds: 9, want: []string{"b", "c"}},
		"workers without figures come after those that fit":  {states: map[string]workloadfit.State{"a": workloadfit.Unknown}, current: []string{"b"}, rounds: 2, want: []string{"b", "c", "a"}},
		"a worker that left the config is no longer offered": {current: []string{"gone", "b"}, want: []string{"b"}},
		"nominations kept while their worker stays":          {states: map[string]workloadfit.State{"b": workloadfit.NoFit}, current: []string{"b"}, want: []string{"b"}},
		"fits nowhere: nobody":                               {states: map[string]workloadfit.State{"a": workloadfit.NoFit, "b": workloadfit.NoFit, "c": workloadfit.NoFit}, rounds: 3},
		"still fits where it was offered: waits there":       {current: []string{"a"}, rounds: 1, holding: true, want: []string{"a"}},
		"holding with nobody offered yet: the first":         {rounds: 0, holding: true, want: []string{"a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var verdicts []workloadfit.Verdict
			for _, c := range ranked {
				st := tc.states[c]
				if st == "" {
					st = workloadfit.Fits
				}
				verdicts = append(verdicts, workloadfit.Verdict{Cluster: c, State: st})
			}
			got := Nominate(ranked, workloadfit.Order(verdicts), tc.current, tc.rounds, tc.holding)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("nominated (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHolding(t *testing.T) {
	verdicts := []workloadfit.Verdict{{Cluster: "a", State: workloadfit.Fits}, {Cluster: "b", State: workloadfit.NoFit}, {Cluster: "c", State: workloadfit.Unknown}}
	cases := map[string]struct {
		current []string
		rounds  int
		want    bool
	}{
		"offered to a worker that fits":                 {current: []string{"a"}, rounds: 1, want: true},
		"offered to one that no longer fits":            {current: []string{"b"}, rounds: 1},
		"offered to one without figures":                {current: []string{"c"}, rounds: 1},
		"not offered yet":                               {rounds: 0},
		"after HoldRounds rounds it is offered to more": {current: []string{"a"}, rounds: HoldRounds},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Holding(tc.current, verdicts, tc.rounds); got != tc.want {
				t.Errorf("Holding(%v, rounds %d) = %v, want %v", tc.current, tc.rounds, got, tc.want)
			}
		})
	}
}

func TestRounds(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		now  time.Time
		want int
	}{
		"at once":                             {now: t0, want: 0},
		"within the first":                    {now: t0.Add(2999 * time.Millisecond), want: 0},
		"after the first (3 s)":               {now: t0.Add(3 * time.Second), want: 1},
		"the second lasts 6 s":                {now: t0.Add(8999 * time.Millisecond), want: 1},
		"after the second (9 s)":              {now: t0.Add(9 * time.Second), want: 2},
		"after the third (21 s)":              {now: t0.Add(22 * time.Second), want: 3},
		"a clock behind":                      {now: t0.Add(-time.Second), want: 0},
		"after a minute: 3, 9, 21, 45 passed": {now: t0.Add(time.Minute), want: 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Rounds(t0, tc.now, 3*time.Second)
			if got != tc.want {
				t.Errorf("Rounds = %d, want %d", got, tc.want)
			}
			if end := RoundEnd(t0, got, 3*time.Second); !tc.now.Before(t0) && !end.After(tc.now) {
				t.Errorf("round %d ends at %s, not after now %s", got, end.Sub(t0), tc.now.Sub(t0))
			}
		})
	}
}

func TestDispatchable(t *testing.T) {
	pending := &kueuev1beta2.AdmissionCheckState{Name: "mk", State: kueuev1beta2.CheckStatePending}
	admitted := &kueuev1beta2.Admission{}
	cases := map[string]struct {
		wl    kueuev1beta2.Workload
		check *kueuev1beta2.AdmissionCheckState
		want  bool
	}{
		"pending with quota":      {wl: kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Admission: admitted}}, check: pending, want: true},
		"no MultiKueue check":     {wl: kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Admission: admitted}}},
		"no quota on the hub yet": {wl: kueuev1beta2.Workload{}, check: pending},
		"a worker has it":         {wl: kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Admission: admitted, ClusterName: ptr.To("a")}}, check: pending},
		"check ready":             {wl: kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Admission: admitted}}, check: &kueuev1beta2.AdmissionCheckState{State: kueuev1beta2.CheckStateReady}},
		"finished": {wl: kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Admission: admitted,
			Conditions: []metav1.Condition{{Type: kueuev1beta2.WorkloadFinished, Status: metav1.ConditionTrue}}}}, check: pending},
		"evicted, its Job not yet stopped": {wl: kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Admission: admitted,
			Conditions: []metav1.Condition{{Type: kueuev1beta2.WorkloadEvicted, Status: metav1.ConditionTrue}}}}, check: pending},
		"admitted again after an eviction": {wl: kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Admission: admitted,
			Conditions: []metav1.Condition{{Type: kueuev1beta2.WorkloadEvicted, Status: metav1.ConditionFalse}}}}, check: pending, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Dispatchable(&tc.wl, tc.check); got != tc.want {
				t.Errorf("Dispatchable = %v, want %v", got, tc.want)
			}
		})
	}
}
