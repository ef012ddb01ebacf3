package fleetview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestQueuePlaces(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	wl := func(ns, name, queue string, created int, priority int32, reserved bool) kueuev1beta2.Workload {
		w := kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + name),
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(created) * time.Second))},
			Spec: kueuev1beta2.WorkloadSpec{QueueName: kueuev1beta2.LocalQueueName(queue), Priority: ptr.To(priority)}}
		if reserved {
			w.Status.Conditions = []metav1.Condition{{Type: kueuev1beta2.WorkloadQuotaReserved, Status: metav1.ConditionTrue}}
			w.Status.Admission = &kueuev1beta2.Admission{ClusterQueue: "cq-a"}
		}
		return w
	}
	lqs := map[string]string{"a/q": "cq-a", "b/q": "cq-a", "c/q": "cq-c"}
	got := QueuePlaces([]kueuev1beta2.Workload{
		wl("a", "old", "q", 1, 0, false),
		wl("b", "urgent", "q", 5, 100, false), // higher priority goes first, though newer
		wl("a", "running", "q", 0, 0, true),   // holds quota: not pending
		wl("a", "new", "q", 9, 0, false),
		wl("c", "alone", "q", 3, 0, false),
		wl("d", "no-queue", "missing", 2, 0, false), // its LocalQueue is unknown: no place
	}, lqs)
	ahead := func(ns, name string, created int, priority int32) QueuedWorkload {
		return QueuedWorkload{Namespace: ns, Name: name, Priority: priority, QueueOrderTime: t0.Add(time.Duration(created) * time.Second).Format(time.RFC3339)}
	}
	urgent, old := ahead("b", "urgent", 5, 100), ahead("a", "old", 1, 0)
	want := map[string]Place{
		"b/urgent": {Position: 1, Pending: 3, First: []QueuedWorkload{}},
		"a/old":    {Position: 2, Pending: 3, First: []QueuedWorkload{urgent}},
		"a/new":    {Position: 3, Pending: 3, First: []QueuedWorkload{urgent, old}},
		"c/alone":  {Position: 1, Pending: 1, First: []QueuedWorkload{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("QueuePlaces (-want +got):\n%s", diff)
	}
}
