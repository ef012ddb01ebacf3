//go:build integration

package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/bench/floor"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// BenchmarkPlacementWriteFloor measures the floor that BenchmarkPlacementAtScale's times stand on:
// the same four writes per placement (the placement's create, its PlacementDecision's create and
// status, the placement's status), made by one client with as many workers as the hub has (16),
// and with four times as many, and no scheduling at all, against the same kind of API server. Run it with
// `go test -tags integration -run '^$' -bench PlacementWriteFloor ./bench/`.
func BenchmarkPlacementWriteFloor(b *testing.B) {
	startRecord(b, "bench-placement-floor")
	bins := binaries(b)
	for _, workers := range []int{16, 64} {
		p := 1000
		if smoke() {
			p = 20
		}
		b.Run(fmt.Sprintf("%d-placements-%d-workers", p, workers), func(b *testing.B) {
			for range b.N {
				d := writeFloor(b, bins, p, workers)
				report(b, d.Seconds(), "s-4-writes-each")
				report(b, float64(4*p)/d.Seconds(), "writes/s")
			}
			report(b, 0, "ns/op")
		})
	}
}

func writeFloor(b *testing.B, bins localk8s.Binaries, n, workers int) time.Duration {
	ctx := context.Background()
	cl := startHubAPIServer(b, bins, b.TempDir()).Client
	if err := createPlacementFleet(ctx, progress{start: time.Now()}, cl, 10); err != nil {
		b.Fatal(err)
	}
	d, err := placementWrites(ctx, cl, benchNamespace, n, workers)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// floorWorkers is how many placements the hub reconciles at once, and so how many writers the
// floor is measured with.
const floorWorkers = 16

// placementWrites makes, in namespace ns (created if missing), the four writes of n placements
// that the hub makes for each (the placement's create, its PlacementDecision's create and
// status, the placement's status), with workers writers and no scheduling, and returns how long
// they took: the API server's floor under a placement run of n placements.
func placementWrites(ctx context.Context, cl client.Client, ns string, n, workers int) (time.Duration, error) {
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	start := time.Now()
	err := parallel(placementNames(n), workers, func(name string) error {
		p := benchPlacement(name)
		p.Namespace = ns
		if err := cl.Create(ctx, p); err != nil {
			return err
		}
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-decision-1",
			Labels: map[string]string{clusterv1beta1.PlacementLabel: name, clusterv1beta1.DecisionGroupIndexLabel: "0"}}}
		if err := cl.Create(ctx, d); err != nil {
			return err
		}
		for i := range perPlacement {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{
				ClusterName: fmt.Sprintf("cluster-%05d", i), Score: 180, Reason: "score 180 = AddOn/demo/demo 80 + ResourceAllocatableCPU 100 + Balance 0"})
		}
		if err := cl.Status().Update(ctx, d); err != nil {
			return err
		}
		orig := p.DeepCopy()
		p.Status.NumberOfSelectedClusters = perPlacement
		p.Status.DecisionGroups = []clusterv1beta1.DecisionGroupStatus{{Decisions: []string{d.Name}, ClusterCount: perPlacement}}
		p.Status.Conditions = []metav1.Condition{
			{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue, Reason: clusterv1beta1.PlacementReasonAllDecisionsScheduled, Message: "All cluster decisions scheduled", LastTransitionTime: metav1.Now()},
			{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse, Reason: clusterv1beta1.PlacementReasonSucceedConfigured, Message: "Placement configurations check pass", LastTransitionTime: metav1.Now()},
		}
		return cl.Status().Patch(ctx, p, client.MergeFrom(orig))
	})
	return time.Since(start), err
}

// placementTarget, decisionTarget and eventTarget are the floor probe's objects: the
// benchmark's own placement, its decision holding perPlacement clusters, and an event as a
// controller records one, in floorNamespace.
func placementTarget() floor.Target {
	return floor.Target{Resource: "placements",
		New: func(i int) client.Object {
			p := benchPlacement(fmt.Sprintf("floor-%05d", i))
			p.Namespace = floorNamespace
			return p
		},
		SetStatus: func(o client.Object, round int) {
			p := o.(*clusterv1beta1.Placement)
			p.Status.NumberOfSelectedClusters = int32(round)
			p.Status.Conditions = []metav1.Condition{{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue,
				Reason: clusterv1beta1.PlacementReasonAllDecisionsScheduled, Message: fmt.Sprintf("round %d", round), LastTransitionTime: metav1.Now()}}
		}}
}

func decisionTarget() floor.Target {
	return floor.Target{Resource: "placementdecisions",
		New: func(i int) client.Object {
			name := fmt.Sprintf("floor-%05d", i)
			return &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: floorNamespace, Name: name + "-decision-1",
				Labels: map[string]string{clusterv1beta1.PlacementLabel: name, clusterv1beta1.DecisionGroupIndexLabel: "0"}}}
		},
		SetStatus: func(o client.Object, round int) {
			d := o.(*clusterv1beta1.PlacementDecision)
			d.Status.Decisions = d.Status.Decisions[:0]
			for i := range perPlacement {
				d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{
					ClusterName: fmt.Sprintf("cluster-%05d", i+round), Score: 180, Reason: "score 180 = AddOn/demo/demo 80 + ResourceAllocatableCPU 100 + Balance 0"})
			}
		}}
}

func eventTarget() floor.Target {
	return floor.Target{Resource: "events",
		New: func(i int) client.Object {
			return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: floorNamespace, Name: fmt.Sprintf("floor-%05d.1", i)},
				InvolvedObject: corev1.ObjectReference{APIVersion: clusterv1beta1.GroupVersion.String(), Kind: "Placement", Namespace: floorNamespace, Name: fmt.Sprintf("floor-%05d", i)},
				Reason:         "DecisionCreate", Message: "Decision floor-decision-1 is created with placement floor in namespace floor", Type: corev1.EventTypeNormal,
				Source: corev1.EventSource{Component: "placement-controller"}}
		}}
}
