//go:build integration

package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
)

// logStages logs, for the jobs moved from the lost worker, when each step of the move happened
// after the cut (the median and the slowest, from the objects' own timestamps, to the second):
// the hub's Workload queued again after its eviction, its quota reserved again, admitted (its MultiKueue check Ready on
// the new worker), then on the new worker the Job created and its pod created and started. It
// names where the time after the declared loss goes.
func logStages(t *testing.T, hub client.Client, to *fenced, held []string, cut time.Time) {
	t.Helper()
	steps := []string{"requeued on the hub", "quota reserved again", "admitted (check Ready)", "job on the worker", "pod created", "pod started"}
	at := make([][]time.Duration, len(steps))
	since := func(i int, ts metav1.Time) {
		if !ts.IsZero() {
			at[i] = append(at[i], ts.Sub(cut.Truncate(time.Second)))
		}
	}
	ctx := context.Background()
	if wl, err := workloadOf(ctx, hub, held[0]); err == nil && wl != nil {
		var b strings.Builder
		for _, c := range wl.Status.Conditions {
			fmt.Fprintf(&b, "\n  %s=%s at +%.0fs (%s: %s)", c.Type, c.Status, c.LastTransitionTime.Sub(cut.Truncate(time.Second)).Seconds(), c.Reason, c.Message)
		}
		t.Logf("the hub's Workload of %s, conditions after the move:%s", held[0], b.String())
	}
	for _, n := range held {
		wl, err := workloadOf(ctx, hub, n)
		if err != nil || wl == nil {
			continue
		}
		// Kueue's Requeued condition: True when the evicted workload was queued again (Evicted is
		// False again by now, with the time of the new admission).
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadRequeued); c != nil && c.Status == metav1.ConditionTrue {
			since(0, c.LastTransitionTime)
		}
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionTrue {
			since(1, c.LastTransitionTime)
		}
		for _, s := range wl.Status.AdmissionChecks {
			if s.State == kueuev1beta2.CheckStateReady {
				since(2, s.LastTransitionTime)
			}
		}
		if j, err := to.Spoke.Client.BatchV1().Jobs(kueuequeues.LocalQueueNS).Get(ctx, n, metav1.GetOptions{}); err == nil {
			since(3, j.CreationTimestamp)
		}
		for _, p := range pods(t, to, n) {
			since(4, p.CreationTimestamp)
			if p.Status.StartTime != nil {
				since(5, *p.Status.StartTime)
			}
		}
	}
	var b strings.Builder
	for i, s := range steps {
		d := at[i]
		if len(d) == 0 {
			fmt.Fprintf(&b, "\n  %-24s no record", s)
			continue
		}
		slices.Sort(d)
		fmt.Fprintf(&b, "\n  %-24s p50 %4.0fs  max %4.0fs  (%d jobs)", s, d[len(d)/2].Seconds(), d[len(d)-1].Seconds(), len(d))
	}
	t.Logf("the move, step by step, seconds after the cut (objects' timestamps, to the second):%s", b.String())
}
