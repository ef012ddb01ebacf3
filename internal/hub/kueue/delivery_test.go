package kueue

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
)

var gone = &metav1.Time{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}

// clusterObjects are ManagedCluster name and its namespace, as the case says.
func clusterObjects(name string, accepted, deleting, namespaceTerminating bool) []client.Object {
	hold := []string{"test/hold"} // so that a delete leaves them deleting
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: hold}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted}}
	if deleting {
		mc.DeletionTimestamp = gone
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: hold}}
	if namespaceTerminating {
		ns.DeletionTimestamp, ns.Status.Phase = gone, corev1.NamespaceTerminating
	}
	return []client.Object{mc, ns}
}

// The credentials controller makes the worker's ManifestWork, add-on and token Role only for a
// cluster the hub accepts, not being deleted, whose namespace is not terminating; for the others
// it removes what it made (a cluster denied after it was a worker).
func TestCredentialsOnlyForAcceptedClusters(t *testing.T) {
	type state struct{ accepted, deleting, namespaceTerminating bool }
	cases := map[string]struct {
		now  state
		want []string
	}{
		"accepted":              {state{accepted: true}, []string{"ManagedClusterAddOn", "ManifestWork", "Role"}},
		"not accepted":          {state{}, nil},
		"being deleted":         {state{accepted: true, deleting: true}, nil},
		"namespace terminating": {state{accepted: true, namespaceTerminating: true}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mkc := &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "mkc-uid",
				Labels: map[string]string{ManagedLabel: ManagedValue}}, Spec: ClusterSpec("a", SourceSecret)}
			objs := append(clusterObjects("a", true, false, false), mkc)
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
			cr := &CredentialsReconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret, Resync: time.Minute}
			req := reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}}
			// First a worker the hub accepts, then as the case says.
			if _, err := cr.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: "a"}, mc); err != nil {
				t.Fatal(err)
			}
			if !tc.now.accepted {
				mc.Spec.HubAcceptsClient = false
				if err := c.Update(ctx, mc); err != nil {
					t.Fatal(err)
				}
			}
			if tc.now.deleting { // held by its finalizer
				if err := c.Delete(ctx, mc); err != nil {
					t.Fatal(err)
				}
			}
			if tc.now.namespaceTerminating {
				if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := cr.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range []client.Object{
				&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: kueueworker.AddOnName}},
				&workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: kueueworker.WorkName}},
				&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: kueueworker.TokenRole("a")}},
			} {
				if exists(t, c, o) {
					got = append(got, reflect.TypeOf(o).Elem().Name())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the hub's objects for cluster a (-want +got):\n%s", diff)
			}
		})
	}
}

// checkOfPlacement is an AdmissionCheck of the hub's naming Placement gpu, which decided the
// clusters, with the placement and its decision.
func checkOfPlacement(decided ...string) (*kueuev1beta2.AdmissionCheck, []client.Object) {
	ac := &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "check", UID: "ac-uid"},
		Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: ControllerName, Parameters: &kueuev1beta2.AdmissionCheckParametersReference{
			APIGroup: clusterv1beta1.GroupVersion.Group, Kind: "Placement", Name: "gpu"}}}
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: "gpu-decision-1",
		Labels: map[string]string{clusterv1beta1.PlacementLabel: "gpu"}}}
	for _, c := range decided {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return ac, []client.Object{ac, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: "gpu"}}, d}
}

// An AdmissionCheck whose placement decides a cluster the hub does not accept says so in its
// Active condition, rather than waiting for that cluster's kubeconfig.
func TestActiveSaysClusterNotAccepted(t *testing.T) {
	ctx := context.Background()
	ac, objs := checkOfPlacement("ok", "denied")
	objs = append(objs, clusterObjects("ok", true, false, false)...)
	objs = append(objs, clusterObjects("denied", false, false, false)...)
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).WithStatusSubresource(ac).Build()
	r := &Reconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret, Clock: clocktesting.NewFakePassiveClock(gone.Time)}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ac)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(ac.Status.Conditions, kueuev1beta2.AdmissionCheckActive)
	if cond == nil {
		t.Fatal("no Active condition")
	}
	type result struct{ Status, Reason, Message string }
	want := result{"False", ReasonClusterNotAccepted, "Placement kueue-system/gpu decides clusters the hub gives no MultiKueue credentials: " +
		"ManagedCluster denied is not accepted by the hub (spec.hubAcceptsClient is false): the hub puts nothing in its namespace until an administrator accepts it; " +
		"accept them (spec.hubAcceptsClient: true), or have the placement leave them out; also waiting for kubeconfig Secrets multikueue-ok"}
	if diff := cmp.Diff(want, result{string(cond.Status), cond.Reason, cond.Message}); diff != "" {
		t.Errorf("Active (-want +got):\n%s", diff)
	}
}

// A worker the hub declared lost leaves the check's MultiKueueConfig and its MultiKueueCluster
// goes, so that Kueue stops reaching for it; the Active condition names it.
func TestLostWorkerLeavesMultiKueue(t *testing.T) {
	ctx := context.Background()
	ac, objs := checkOfPlacement("lost", "ok")
	for _, name := range []string{"lost", "ok"} {
		objs = append(objs, clusterObjects(name, true, false, false)...)
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: SecretName(name)},
			Data: map[string][]byte{kueuev1beta2.MultiKueueConfigSecretKey: []byte("kubeconfig")}})
	}
	mc := objs[3].(*clusterv1.ManagedCluster)
	mc.Annotations = map[string]string{fencing.AnnotationTiming: fencing.Default.String(), fencing.AnnotationEpoch: "2",
		fencing.AnnotationLostAt: gone.UTC().Format(time.RFC3339)}
	mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown,
		Reason: clusterv1.ManagedClusterReasonLeaseUpdateStopped, LastTransitionTime: *gone}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).WithStatusSubresource(ac).Build()
	r := &Reconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret, Clock: clocktesting.NewFakePassiveClock(gone.Time)}
	reconcileCheck := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ac)}); err != nil {
			t.Fatal(err)
		}
	}
	reconcileCheck()
	cfg := &kueuev1beta2.MultiKueueConfig{}
	if err := c.Get(ctx, client.ObjectKey{Name: "gpu"}, cfg); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok"}, cfg.Spec.Clusters); diff != "" {
		t.Errorf("MultiKueueConfig clusters (-want +got):\n%s", diff)
	}
	if exists(t, c, &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "lost"}}) {
		t.Errorf("MultiKueueCluster lost still exists")
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(ac.Status.Conditions, kueuev1beta2.AdmissionCheckActive); cond == nil || !strings.Contains(cond.Message, "left out while declared lost: lost") {
		t.Errorf("Active = %+v, want it to name the lost worker", cond)
	}

	// Back: Available again, the worker returns to the config.
	mc.Status.Conditions[0].Status = metav1.ConditionTrue
	if err := c.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	reconcileCheck()
	if err := c.Get(ctx, client.ObjectKey{Name: "gpu"}, cfg); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"lost", "ok"}, cfg.Spec.Clusters); diff != "" {
		t.Errorf("MultiKueueConfig clusters after the worker is back (-want +got):\n%s", diff)
	}
}
