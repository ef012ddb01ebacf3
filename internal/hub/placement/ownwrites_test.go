package placement

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// TestOwnWritesAreNotRescheduled: the events of the controller's own writes (recorded before they
// are sent) queue nothing, while anyone else's change to the same PlacementDecision, a write that
// failed, or a deletion nobody recorded queue the placement.
func TestOwnWritesAreNotRescheduled(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "p-decision-1"}
	labels := map[string]string{clusterv1beta1.PlacementLabel: "p"}
	decision := func(clusters ...string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: labels}}
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		return d
	}
	write := func(clusters ...string) ownWrite {
		d := decision(clusters...)
		return ownWrite{content: scheduler.PlacementDecisionSlice{Name: key.Name, Labels: labels, Decisions: d.Status.Decisions}}
	}
	type step struct {
		expect, forget *ownWrite // recorded before the event, or recorded and then forgotten
		event          *clusterv1beta1.PlacementDecision
		deleted        bool
	}
	ptr := func(w ownWrite) *ownWrite { return &w }
	cases := map[string]struct {
		steps []step
		want  []bool // queued, per step
	}{
		"create then status: both own": {
			steps: []step{{expect: ptr(write()), event: decision()}, {expect: ptr(write("c1")), event: decision("c1")}},
			want:  []bool{false, false},
		},
		"someone else edits after an own write": {
			steps: []step{{expect: ptr(write("c1")), event: decision("c1")}, {event: decision("c9")}},
			want:  []bool{false, true},
		},
		"an own write observed once only": {
			steps: []step{{expect: ptr(write("c1")), event: decision("c1")}, {event: decision("c1")}},
			want:  []bool{false, true},
		},
		"a failed write is forgotten": {
			steps: []step{{forget: ptr(write("c1")), event: decision("c1")}},
			want:  []bool{true},
		},
		"events of superseded writes are skipped too": {
			steps: []step{{expect: ptr(write("c1"))}, {expect: ptr(write("c2")), event: decision("c2")}, {event: decision("c1")}},
			want:  []bool{false, false, true},
		},
		"own delete": {
			steps: []step{{expect: &ownWrite{deleted: true}, event: decision("c1"), deleted: true}},
			want:  []bool{false},
		},
		"delete by someone else": {
			steps: []step{{expect: ptr(write("c2")), event: decision("c1"), deleted: true}},
			want:  []bool{true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			own := newOwnWrites()
			h := newDecisionIndex().eventHandler(own)
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			var got []bool
			for _, s := range tc.steps {
				if s.expect != nil {
					own.expect(key, *s.expect)
				}
				if s.forget != nil {
					own.expect(key, *s.forget)
					own.forget(key, *s.forget)
				}
				if s.event == nil {
					got = append(got, false)
					continue
				}
				switch {
				case s.deleted:
					h.Delete(context.Background(), event.DeleteEvent{Object: s.event}, q)
				default:
					h.Update(context.Background(), event.UpdateEvent{ObjectOld: s.event, ObjectNew: s.event}, q)
				}
				got = append(got, q.Len() > 0)
				for q.Len() > 0 {
					r, _ := q.Get()
					q.Done(r)
					q.Forget(r)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queued per step (-want +got):\n%s", diff)
			}
		})
	}
}
