package dynamicscoring

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

type events []string

func (e *events) Eventf(_ runtime.Object, _ runtime.Object, _, reason, _, _ string, _ ...interface{}) {
	*e = append(*e, reason)
}

// A DynamicScorer outside the hub's namespace is not checked (no request leaves the hub), is
// marked Inactive and not Accepted naming metadata.namespace and the fix, and takes no score
// name from the one in the hub's namespace.
func TestNamespaceRestriction(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	mk := func(ns, name string) *dsv1alpha1.DynamicScorer {
		s := scorer(name, "gpu", "")
		s.Namespace, s.Spec.ConfigURL, s.Spec.Source.Auth = ns, srv.URL+"/config", nil
		return &s
	}
	// The tenant's scorer sorts first (namespace "a-tenant" < the hub's): before the fix it took
	// the score name "gpu".
	tenant, admin := mk("a-tenant", "gpu"), mk(DefaultNamespace, "gpu")
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "east", Name: scoringwire.Name}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tenant, admin, mca).
		WithStatusSubresource(&dsv1alpha1.DynamicScorer{}).Build()
	ctx := context.Background()
	ev := &events{}
	r := &ScorerReconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)),
		HTTP: httpClient(time.Second, true), AllowLocal: true, Recorder: ev}
	r.last = map[client.ObjectKey]checked{}

	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(tenant)}); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the hub sent %d requests for a scorer outside its namespace, want none", n)
	}
	got := &dsv1alpha1.DynamicScorer{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(tenant), got); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, dsv1alpha1.ConditionAccepted)
	if got.Status.HealthStatus != dsv1alpha1.ScorerHealthInactive || cond == nil || cond.Status != metav1.ConditionFalse ||
		cond.Reason != ReasonNamespaceNotAccepted || !strings.Contains(cond.Message, "metadata.namespace") ||
		!strings.Contains(cond.Message, NamespaceFlag) || !strings.Contains(cond.Message, "create it in namespace "+DefaultNamespace) {
		t.Errorf("refused scorer: health %q, Accepted %+v; want Inactive, False %s naming metadata.namespace, %s and the fix",
			got.Status.HealthStatus, cond, ReasonNamespaceNotAccepted, NamespaceFlag)
	}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(admin)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(admin), got); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, dsv1alpha1.ConditionAccepted); got.Status.HealthStatus != dsv1alpha1.ScorerHealthActive || cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("accepted scorer: health %q, Accepted %+v; want Active, True", got.Status.HealthStatus, cond)
	}
	if diff := cmp.Diff(events{ReasonNamespaceNotAccepted, ReasonScorerActive}, *ev); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Even were the tenant's scorer Active, the agents' list holds only the hub namespace's.
	if err := c.Get(ctx, client.ObjectKeyFromObject(tenant), tenant); err != nil {
		t.Fatal(err)
	}
	tenant.Status.HealthStatus = dsv1alpha1.ScorerHealthActive
	if err := c.Status().Update(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	cr := &ConfigReconciler{Client: c, Recorder: ev}
	if _, err := cr.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: "east"}}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "east", Name: scoringwire.ConfigMapName}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels[builtinaddon.Label] != scoringwire.Name {
		t.Errorf("ConfigMap labels %v", cm.Labels)
	}
	sums, err := scoringwire.DecodeSummaries(cm.Data)
	if err != nil {
		t.Fatal(err)
	}
	var gotScorers []string
	for _, s := range sums {
		gotScorers = append(gotScorers, s.Namespace+"/"+s.Name)
	}
	if diff := cmp.Diff([]string{DefaultNamespace + "/gpu"}, gotScorers); diff != "" {
		t.Errorf("scorers the agents run (-want +got):\n%s", diff)
	}
}
