package lease

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
)

// TestReconcileWritesOnlyOnChange drives both reconcilers through a lease expiry with a fake
// clock and checks what they ask for and when they write.
func TestReconcileWritesOnlyOnChange(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(now)
	mc := makeCluster("a").LeaseSeconds(10).Condition(available(metav1.ConditionTrue, now.Add(-time.Hour))).Obj()
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithObjects(mc, lease("a", ago(0), now.Add(-time.Hour))).
		WithStatusSubresource(&clusterv1.ManagedCluster{}).Build()
	leases := &Reconciler{Client: c, Clock: clk, APIReader: c}
	taints := &TaintReconciler{Client: c, Clock: clk}
	req := reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}}

	get := func() *clusterv1.ManagedCluster {
		t.Helper()
		got := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	step := func(r reconcile.Reconciler, wantRequeueAfter time.Duration, wantWrite bool) {
		t.Helper()
		rv := get().ResourceVersion
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != wantRequeueAfter {
			t.Errorf("%T at %s: requeue after %s, want %s", r, clk.Now().Format(time.RFC3339), res.RequeueAfter, wantRequeueAfter)
		}
		if wrote := get().ResourceVersion != rv; wrote != wantWrite {
			t.Errorf("%T at %s: wrote = %t, want %t", r, clk.Now().Format(time.RFC3339), wrote, wantWrite)
		}
	}

	step(leases, 50*time.Second, true) // ClockSynced appears once
	step(leases, 50*time.Second, false)
	step(taints, 0, false) // True and untainted already
	clk.SetTime(now.Add(49 * time.Second))
	step(leases, time.Second, false)
	clk.SetTime(now.Add(50 * time.Second))
	step(leases, 0, true)
	step(leases, 0, false)
	if got := meta.FindStatusCondition(get().Status.Conditions, clusterv1.ManagedClusterConditionAvailable); got == nil ||
		got.Status != metav1.ConditionUnknown || got.Reason != clusterv1.ManagedClusterReasonLeaseUpdateStopped || got.ObservedGeneration != get().Generation {
		t.Errorf("Available after expiry = %+v, want Unknown, %s, observedGeneration %d", got, clusterv1.ManagedClusterReasonLeaseUpdateStopped, get().Generation)
	}
	step(taints, 0, true)
	step(taints, 0, false)
	if got := get().Spec.Taints; len(got) != 1 || got[0].Key != clusterv1.ManagedClusterTaintUnreachable {
		t.Errorf("taints after expiry = %+v, want only %s", got, clusterv1.ManagedClusterTaintUnreachable)
	}

	// A cluster the hub no longer accepts is not watched, whatever its lease.
	denied := get()
	denied.Spec.HubAcceptsClient = false
	meta.RemoveStatusCondition(&denied.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if err := c.Update(ctx, denied); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(ctx, denied); err != nil {
		t.Fatal(err)
	}
	step(leases, 0, false)
}
