package placement

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// TestDecisionIndex feeds random adds, updates and deletes of PlacementDecisions (several
// namespaces and placements, slices without the placement label, clusters repeated across slices)
// to the index and checks after each that it says what scheduler.DecisionInputs and
// CurrentClusterDecisions say over all the PlacementDecisions there are.
func TestDecisionIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := newDecisionIndex()
	live := map[string]*clusterv1beta1.PlacementDecision{} // by namespace/name
	placements := []types.NamespacedName{{Namespace: "a", Name: "p"}, {Namespace: "a", Name: "q"}, {Namespace: "b", Name: "p"}}
	random := func(ns, name string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if r.IntN(5) > 0 {
			p := placements[r.IntN(len(placements))]
			if p.Namespace == ns || r.IntN(2) == 0 {
				d.Labels = map[string]string{clusterv1beta1.PlacementLabel: p.Name}
			}
		}
		d.Status.Decisions = []clusterv1beta1.ClusterDecision{}
		for range r.IntN(6) {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: fmt.Sprintf("c%d", r.IntN(8)), Score: int64(r.IntN(3))})
		}
		return d
	}
	for step := range 2000 {
		ns := []string{"a", "b"}[r.IntN(2)]
		name := fmt.Sprintf("d%d", r.IntN(6))
		key := ns + "/" + name
		old := live[key]
		switch {
		case old == nil:
			d := random(ns, name)
			live[key] = d
			x.update(nil, d)
		case r.IntN(4) == 0:
			delete(live, key)
			x.update(old, nil)
		default:
			d := random(ns, name)
			live[key] = d
			x.update(old, d)
		}
		// By name: which of a cluster's repeated decisions CurrentClusterDecisions keeps depends
		// on the order, and the index gives a placement's slices by name.
		var all []clusterv1beta1.PlacementDecision
		for _, k := range slices.Sorted(maps.Keys(live)) {
			all = append(all, *live[k])
		}
		for _, p := range placements {
			wantCurrent, wantOthers := scheduler.DecisionInputs(p.Namespace, p.Name, all)
			mine, current, others := x.inputs(p)
			if diff := cmp.Diff(wantCurrent, current, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("step %d, placement %s: current (-DecisionInputs +index):\n%s", step, p, diff)
			}
			if diff := cmp.Diff(wantOthers, others, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("step %d, placement %s: others (-DecisionInputs +index):\n%s", step, p, diff)
			}
			want := scheduler.CurrentClusterDecisions(p.Namespace, p.Name, all)
			if diff := cmp.Diff(want, scheduler.CurrentClusterDecisions(p.Namespace, p.Name, mine), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("step %d, placement %s: current scores (-all +index):\n%s", step, p, diff)
			}
		}
	}
}

// TestDecisionEvents: a PlacementDecision's event updates the index, then queues the placement
// its label names and the one controlling it.
func TestDecisionEvents(t *testing.T) {
	x := newDecisionIndex()
	h := x.eventHandler(newOwnWrites())
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-decision-1",
		Labels:          map[string]string{clusterv1beta1.PlacementLabel: "p"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "Placement", Name: "owner", Controller: ptr.To(true)}}}}
	d.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "c1"}}
	h.Create(context.Background(), event.CreateEvent{Object: d}, q)
	var got []reconcile.Request
	for q.Len() > 0 {
		r, _ := q.Get()
		got = append(got, r)
		q.Done(r)
	}
	want := []reconcile.Request{req("ns", "p"), req("ns", "owner")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
	if _, current, _ := x.inputs(types.NamespacedName{Namespace: "ns", Name: "p"}); !cmp.Equal(current, []string{"c1"}) {
		t.Errorf("the index holds %v for ns/p, want [c1]", current)
	}
}
