package chaos

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClassifyRerun: a pod counts as running on the lost worker only while it is Pending or
// Running and not past its deletion grace; a job whose pod there had Succeeded before it started
// elsewhere ran again after finishing, not at the same time.
func TestClassifyRerun(t *testing.T) {
	start := time.Date(2026, 12, 5, 12, 15, 0, 0, time.UTC)
	before, after := start.Add(-5*time.Minute), start.Add(time.Minute)
	cases := map[string]struct {
		pods     []podLife
		want     rerun
		wantLast time.Time
	}{
		"no pod seen":                                {want: movedCleanly},
		"running, not deleted":                       {pods: []podLife{{}}, want: ranConcurrently},
		"pending or running, deleted after start":    {pods: []podLife{{deadline: after}}, want: ranConcurrently},
		"deleted, grace over before start":           {pods: []podLife{{deadline: before}}, want: movedCleanly, wantLast: before},
		"removed before start":                       {pods: []podLife{{removed: before}}, want: movedCleanly, wantLast: before},
		"stopped within the second of start":         {pods: []podLife{{deadline: start.Add(300 * time.Millisecond)}}, want: ranConcurrently},
		"failed (killed) before start":               {pods: []podLife{{ended: before}}, want: movedCleanly, wantLast: before},
		"succeeded before start, object still there": {pods: []podLife{{ended: before, succeeded: true}}, want: ranAgainAfterFinishing, wantLast: before},
		"succeeded before start, then removed": {pods: []podLife{{ended: before, succeeded: true, removed: after}},
			want: ranAgainAfterFinishing, wantLast: before},
		"succeeded after start, running at start": {pods: []podLife{{ended: after, succeeded: true}}, want: ranConcurrently},
		"one succeeded, a second still running":   {pods: []podLife{{ended: before, succeeded: true}, {}}, want: ranConcurrently},
		"one failed, one succeeded, both before": {pods: []podLife{{ended: before.Add(-time.Minute)}, {ended: before, succeeded: true}},
			want: ranAgainAfterFinishing, wantLast: before},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, last := classify(tc.pods, start)
			if got != tc.want {
				t.Errorf("classify = %s, want %s", got, tc.want)
			}
			if got != ranConcurrently && !last.Equal(tc.wantLast) {
				t.Errorf("last stopped at %s, want %s", last, tc.wantLast)
			}
		})
	}
}

// TestLifeOf: the phase and the containers' finishedAt set when a pod ended; the earliest
// deletionTimestamp is kept.
func TestLifeOf(t *testing.T) {
	seen := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	finished := seen.Add(-30 * time.Second)
	pod := func(phase corev1.PodPhase, finishedAt *time.Time, deletion *time.Time) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
		if finishedAt != nil {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(*finishedAt)}}}}
		}
		if deletion != nil {
			p.DeletionTimestamp = &metav1.Time{Time: *deletion}
		}
		return p
	}
	later, earlier := seen.Add(time.Minute), seen.Add(10*time.Second)
	cases := map[string]struct {
		was  podLife
		pod  *corev1.Pod
		want podLife
	}{
		"pending":                            {pod: pod(corev1.PodPending, nil, nil), want: podLife{}},
		"running":                            {pod: pod(corev1.PodRunning, nil, nil), want: podLife{}},
		"succeeded: its finishedAt":          {pod: pod(corev1.PodSucceeded, &finished, nil), want: podLife{ended: finished, succeeded: true}},
		"succeeded, no container status":     {pod: pod(corev1.PodSucceeded, nil, nil), want: podLife{ended: seen, succeeded: true}},
		"failed":                             {pod: pod(corev1.PodFailed, &finished, nil), want: podLife{ended: finished}},
		"ended stays when seen again":        {was: podLife{ended: finished.Add(-time.Hour), succeeded: true}, pod: pod(corev1.PodSucceeded, &finished, nil), want: podLife{ended: finished.Add(-time.Hour), succeeded: true}},
		"deleted":                            {pod: pod(corev1.PodRunning, nil, &later), want: podLife{deadline: later}},
		"a shorter grace moves the deadline": {was: podLife{deadline: later}, pod: pod(corev1.PodRunning, nil, &earlier), want: podLife{deadline: earlier}},
		"a later deadline does not":          {was: podLife{deadline: earlier}, pod: pod(corev1.PodRunning, nil, &later), want: podLife{deadline: earlier}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, lifeOf(tc.was, tc.pod, seen), cmp.AllowUnexported(podLife{})); diff != "" {
				t.Errorf("lifeOf (-want +got):\n%s", diff)
			}
		})
	}
}
