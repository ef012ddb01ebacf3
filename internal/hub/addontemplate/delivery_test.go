package addontemplate

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/addon"
	"github.com/flotilla/flotilla/internal/hub/addon/addontest"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// A template add-on's agent is deployed (its ManifestWork made) only on a cluster the hub
// accepts, not being deleted, whose namespace is not terminating; otherwise ManifestApplied says
// why.
func TestReconcileDeploysOnlyToAcceptedClusters(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	type result struct {
		Work            bool
		ManifestApplied string // status/reason, "" without the condition
	}
	cases := map[string]struct {
		accepted, deleting, namespaceTerminating bool
		want                                     result
	}{
		"accepted":              {accepted: true, want: result{Work: true}},
		"not accepted":          {want: result{ManifestApplied: "False/" + delivery.ReasonNotAccepted}},
		"being deleted":         {accepted: true, deleting: true, want: result{ManifestApplied: "False/" + delivery.ReasonDeleting}},
		"namespace terminating": {accepted: true, namespaceTerminating: true, want: result{ManifestApplied: "False/" + delivery.ReasonNamespaceTerminating}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			hold := []string{"test/hold"}
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: tc.accepted}}
			if tc.deleting {
				mc.DeletionTimestamp, mc.Finalizers = &metav1.Time{Time: now}, hold
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
			if tc.namespaceTerminating {
				ns.DeletionTimestamp, ns.Finalizers, ns.Status.Phase = &metav1.Time{Time: now}, hold, corev1.NamespaceTerminating
			}
			tmpl := templateOf(kubeClient, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gpu","namespace":"default"}}`)
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", UID: "mca-uid"},
				Status: addonv1alpha1.ManagedClusterAddOnStatus{
					Conditions: []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured, Status: metav1.ConditionTrue, Reason: "R"}},
					ConfigReferences: []addonv1alpha1.ConfigReference{{
						ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addontemplates"},
						DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: tmpl.Name}, SpecHash: "h1"}}}}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mc, ns, tmpl, mca, managingAddOn("gpu", tmpl.Name)).WithStatusSubresource(mca).Build()
			r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(now)}
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mca)}); err != nil {
				t.Fatal(err)
			}
			var got result
			err := c.Get(ctx, client.ObjectKey{Namespace: "c1", Name: WorkName("gpu")}, &workv1.ManifestWork{})
			got.Work = err == nil
			if err := c.Get(ctx, client.ObjectKeyFromObject(mca), mca); err != nil {
				t.Fatal(err)
			}
			if cond := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied); cond != nil {
				got.ManifestApplied = string(cond.Status) + "/" + cond.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The template controller's status writes carry the Progressing condition that follows from them
// (addon.Progress): WaitingForManifestApplied with the work made, Completed with lastAppliedConfig
// once the work is applied and available, so the progressing controller has no write of its own
// to add.
func TestDeployWritesProgressWithItsStatus(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	type step struct{ Progressing, LastApplied string }
	want := []step{
		{Progressing: "False/" + addon.ReasonWaitingForManifestApplied},
		{Progressing: "False/" + addon.ReasonCompleted, LastApplied: "h1"},
	}
	ctx := context.Background()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	tmpl := templateOf(kubeClient, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gpu","namespace":"default"}}`)
	cma := managingAddOn("gpu", tmpl.Name)
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", UID: "mca-uid"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{
			SupportedConfigs: []addonv1alpha1.ConfigGroupResource{templatesGR},
			Conditions:       []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured, Status: metav1.ConditionTrue, Reason: "R"}},
			ConfigReferences: []addonv1alpha1.ConfigReference{{ConfigGroupResource: templatesGR,
				DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: tmpl.Name}, SpecHash: "h1"}}}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mc, ns, tmpl, mca, cma).WithStatusSubresource(mca, &workv1.ManifestWork{}).Build()
	r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(now)}
	var got []step
	reconcileAndRead := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mca)}); err != nil {
			t.Fatal(err)
		}
		m := &addonv1alpha1.ManagedClusterAddOn{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(mca), m); err != nil {
			t.Fatal(err)
		}
		var s step
		if cond := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); cond != nil {
			s.Progressing = string(cond.Status) + "/" + cond.Reason
		}
		if la := m.Status.ConfigReferences[0].LastAppliedConfig; la != nil {
			s.LastApplied = la.SpecHash
		}
		got = append(got, s)
	}
	reconcileAndRead()
	// The agent applies the work and reports it.
	w := &workv1.ManifestWork{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "c1", Name: WorkName("gpu")}, w); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "R", ObservedGeneration: w.Generation})
	}
	if err := c.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	reconcileAndRead()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Progressing after each write (-want +got):\n%s", diff)
	}
}

// A work the controller made a moment ago that its cache does not hold yet makes the create fail
// with AlreadyExists: the reconcile is retried and the add-on's status says nothing failed.
func TestReconcileDoesNotReportItsOwnWorkAsAFailure(t *testing.T) {
	ctx := context.Background()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	tmpl := templateOf(kubeClient, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gpu","namespace":"default"}}`)
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", UID: "mca-uid"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{
			Conditions: []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured, Status: metav1.ConditionTrue, Reason: "R"}},
			ConfigReferences: []addonv1alpha1.ConfigReference{{ConfigGroupResource: templatesGR,
				DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: tmpl.Name}, SpecHash: "h1"}}}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mc, ns, tmpl, mca, managingAddOn("gpu", tmpl.Name)).WithStatusSubresource(mca).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if _, ok := o.(*workv1.ManifestWork); ok {
				return apierrors.NewAlreadyExists(workv1.GroupVersion.WithResource("manifestworks").GroupResource(), o.GetName())
			}
			return c.Create(ctx, o, opts...)
		}}).Build()
	r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mca)}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("Reconcile: %v, want the AlreadyExists that retries it", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(mca), mca); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied); cond != nil {
		t.Errorf("ManifestApplied is %s/%s (%s), want none: nothing failed", cond.Status, cond.Reason, cond.Message)
	}
}

// A status write from a stale cached add-on conflicts: this controller's part (its conditions,
// registrations) goes on the add-on as the API server has it then, and what another controller
// wrote meanwhile stays; a spec changed meanwhile leaves the write to the reconcile it brings.
func TestWriteStatusAfterAConflict(t *testing.T) {
	other := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured, Status: metav1.ConditionTrue, Reason: "Again",
		Message: "written meanwhile", LastTransitionTime: metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}
	cases := map[string]struct {
		meanwhile func(m *addonv1alpha1.ManagedClusterAddOn)
		want      []string
	}{
		"another controller wrote the status": {
			meanwhile: func(m *addonv1alpha1.ManagedClusterAddOn) { meta.SetStatusCondition(&m.Status.Conditions, other) },
			want:      []string{"Configured=True/Again", "Available=True/ProbeAvailable"},
		},
		"the spec changed": {
			meanwhile: func(m *addonv1alpha1.ManagedClusterAddOn) { m.Generation++ },
			want:      []string{"Configured=True/R"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", Generation: 1},
				Status: addonv1alpha1.ManagedClusterAddOnStatus{Conditions: []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured,
					Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}}}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mca).WithStatusSubresource(mca).
				WithInterceptorFuncs(addontest.ConflictOnce(tc.meanwhile)).Build()
			cached := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(mca), cached); err != nil {
				t.Fatal(err)
			}
			st := cached.Status.DeepCopy()
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable,
				Status: metav1.ConditionTrue, Reason: "ProbeAvailable", Message: "ok"})
			r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}
			if err := r.writeStatus(ctx, cached, st); err != nil {
				t.Fatalf("writeStatus: %v", err)
			}
			got := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(mca), got); err != nil {
				t.Fatal(err)
			}
			var conds []string
			for _, cond := range got.Status.Conditions {
				conds = append(conds, cond.Type+"="+string(cond.Status)+"/"+cond.Reason)
			}
			if diff := cmp.Diff(tc.want, conds); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}
