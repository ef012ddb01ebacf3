package kueue

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestOrderAndNominate(t *testing.T) {
	ranked := []string{"a", "b", "c"}
	full := map[string]bool{"a": true}
	cases := map[string]struct {
		fits    func(string) bool
		current []string
		rounds  int
		want    []string
	}{
		"first round: the best-ranked worker only":           {fits: func(string) bool { return true }, want: []string{"a"}},
		"second round adds the next":                         {fits: func(string) bool { return true }, current: []string{"a"}, rounds: 1, want: []string{"a", "b"}},
		"many rounds: every worker, once":                    {fits: func(string) bool { return true }, current: []string{"a", "b"}, rounds: 9, want: []string{"a", "b", "c"}},
		"a full worker goes after those with room":           {fits: func(c string) bool { return !full[c] }, want: []string{"b"}},
		"the full worker comes last":                         {fits: func(c string) bool { return !full[c] }, current: []string{"b"}, rounds: 2, want: []string{"b", "c", "a"}},
		"a worker that left the config is no longer offered": {fits: func(string) bool { return true }, current: []string{"gone", "b"}, want: []string{"b"}},
		"nominations kept while their worker stays":          {fits: func(c string) bool { return c != "b" }, current: []string{"b"}, rounds: 0, want: []string{"b"}},
		"nothing fits: rank order":                           {fits: func(string) bool { return false }, rounds: 1, want: []string{"a", "b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Nominate(Order(ranked, tc.fits), tc.current, tc.rounds)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("nominated (-want +got):\n%s", diff)
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

func podSet(count int32, gpus string, model string) kueuev1beta2.PodSet {
	ps := kueuev1beta2.PodSet{Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c"}}}}}
	if gpus != "" {
		ps.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{gpuResource: resource.MustParse(gpus)}
	}
	if model != "" {
		ps.Template.Spec.NodeSelector = map[string]string{gpuModelLabel: model}
	}
	return ps
}

func TestGPURequirement(t *testing.T) {
	cases := map[string]struct {
		podSets []kueuev1beta2.PodSet
		want    string
		ok      bool
	}{
		"no GPUs":                   {podSets: []kueuev1beta2.PodSet{podSet(4, "", "")}},
		"one pod set":               {podSets: []kueuev1beta2.PodSet{podSet(2, "8", "H100")}, ok: true, want: "H100 16 8x1"},
		"two pod sets, any model":   {podSets: []kueuev1beta2.PodSet{podSet(1, "1", ""), podSet(3, "4", "")}, ok: true, want: " 13 4x1"},
		"a CPU pod set beside GPUs": {podSets: []kueuev1beta2.PodSet{podSet(1, "", ""), podSet(1, "2", "A100")}, ok: true, want: "A100 2 2x1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, ok := GPURequirement(&kueuev1beta2.Workload{Spec: kueuev1beta2.WorkloadSpec{PodSets: tc.podSets}})
			got := ""
			if ok {
				got = req.Model + " " + req.Total.String() + " " + req.PerNode.String() + "x" + fmt.Sprint(req.Nodes)
			}
			if ok != tc.ok || got != tc.want {
				t.Errorf("GPURequirement = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
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
