package clusterset

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// A burst of cluster label changes counts each set once, after the window; a cluster that moves
// from one set to another has both counted.
func TestCoalescedCountsEachSetOnce(t *testing.T) {
	inSet := func(name, set string) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"set": set}}}
	}
	// Each cluster maps to the set its label names.
	bySet := func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetLabels()["set"]}}}
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	defer q.ShutDown()
	h := coalesced(bySet, time.Second)
	ctx := context.Background()
	for i := range 100 {
		h.Create(ctx, event.CreateEvent{Object: inSet("c"+string(rune('a'+i%26)), "gpu")}, q)
	}
	h.Update(ctx, event.UpdateEvent{ObjectOld: inSet("x", "gpu"), ObjectNew: inSet("x", "cpu")}, q)
	if n := q.Len(); n != 0 {
		t.Fatalf("%d requests ready before the window ended, want none", n)
	}
	clk.Step(time.Second)
	var got []string
	for deadline := time.Now().Add(5 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
		if q.Len() == 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		req, _ := q.Get()
		got = append(got, req.Name)
		q.Done(req)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"cpu", "gpu"}, got); diff != "" {
		t.Errorf("sets counted (-want +got):\n%s", diff)
	}
	if n := q.Len(); n != 0 {
		t.Errorf("%d more requests queued, want each set once", n)
	}
}
