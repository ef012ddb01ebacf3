package registration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

func TestPlanCleanup(t *testing.T) {
	const timeout = 5 * time.Minute
	held := func(name string) cleanupItem { return cleanupItem{Name: name, Held: true} }
	deleting := func(c cleanupItem) cleanupItem { c.Deleting = true; return c }
	cases := map[string]struct {
		addons, works []cleanupItem
		elapsed       time.Duration
		want          cleanupPlan
	}{
		"an empty namespace: done at once": {
			want: cleanupPlan{Done: true},
		},
		"works the agent holds: deleted, and the hub waits for the agent until the timeout": {
			works:   []cleanupItem{held("b"), held("a")},
			elapsed: time.Minute,
			want:    cleanupPlan{DeleteWorks: []string{"a", "b"}, RequeueAfter: 4 * time.Minute},
		},
		"works already being deleted are not deleted again": {
			works:   []cleanupItem{deleting(held("a"))},
			elapsed: time.Minute,
			want:    cleanupPlan{RequeueAfter: 4 * time.Minute},
		},
		"a work no agent holds is deleted and waited for by nobody": {
			works: []cleanupItem{{Name: "a"}},
			want:  cleanupPlan{DeleteWorks: []string{"a"}, Done: true},
		},
		"add-ons first: works stay until the add-ons are gone": {
			addons:  []cleanupItem{{Name: "gpu"}, deleting(cleanupItem{Name: "usage"})},
			works:   []cleanupItem{held("a")},
			elapsed: time.Minute,
			want:    cleanupPlan{DeleteAddons: []string{"gpu"}, RequeueAfter: 4 * time.Minute},
		},
		"after the timeout the hub releases the works the agent still holds": {
			works:   []cleanupItem{deleting(held("a")), held("b")},
			elapsed: timeout,
			want:    cleanupPlan{DeleteWorks: []string{"b"}, Release: []string{"a", "b"}, Done: true},
		},
		"after the timeout an add-on that is still there holds up nothing": {
			addons:  []cleanupItem{deleting(cleanupItem{Name: "gpu"})},
			works:   []cleanupItem{held("a")},
			elapsed: timeout + time.Second,
			want:    cleanupPlan{DeleteWorks: []string{"a"}, Release: []string{"a"}, Done: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := planCleanup(tc.addons, tc.works, t0, t0.Add(tc.elapsed), timeout)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(cleanupPlan{}, "Message")); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if (got.Message == "") != (got.Done && len(got.Release) == 0) {
				t.Errorf("message %q: want one exactly while waiting or when forced", got.Message)
			}
		})
	}
}

func TestPlanCleanupMessages(t *testing.T) {
	works := []cleanupItem{{Name: "a", Held: true}, {Name: "b", Held: true}}
	waiting := planCleanup(nil, works, t0, t0, time.Minute)
	if want := "waiting for the agent to remove from the cluster what 2 ManifestWorks (a, b) applied; at 2026-11-30T12:01:00Z"; !strings.HasPrefix(waiting.Message, want) {
		t.Errorf("waiting message %q, want it to start with %q", waiting.Message, want)
	}
	forced := planCleanup(nil, works, t0, t0.Add(time.Minute), time.Minute)
	if want := "the agent did not remove what 2 ManifestWorks (a, b) applied within 1m0s: the hub removed their finalizer " + workv1.ManifestWorkFinalizer; !strings.HasPrefix(forced.Message, want) {
		t.Errorf("forced message %q, want it to start with %q", forced.Message, want)
	}
}

// cleanupEnv is a hub holding one accepted cluster gpu-east with its namespace, the agent's
// access, and what a test adds, with a clock the test moves.
type cleanupEnv struct {
	t     *testing.T
	c     client.Client
	clock *clocktesting.FakePassiveClock
	r     *ManagedClusterReconciler
}

const cleanupTimeout = 5 * time.Minute

func newCleanupEnv(t *testing.T, objs ...client.Object) *cleanupEnv {
	t.Helper()
	mc := makeCluster("gpu-east").Accepted().Obj()
	clk := clocktesting.NewFakePassiveClock(t0)
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(append(objs, mc)...).WithStatusSubresource(mc).Build()
	e := &cleanupEnv{t: t, c: c, clock: clk, r: &ManagedClusterReconciler{Client: c, Clock: clk, CleanupTimeout: cleanupTimeout}}
	e.reconcile() // accepted: namespace, Role, RoleBinding
	return e
}

func (e *cleanupEnv) reconcile() reconcile.Result {
	e.t.Helper()
	res, err := e.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "gpu-east"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

func (e *cleanupEnv) cluster() *clusterv1.ManagedCluster {
	e.t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Name: "gpu-east"}, mc); err != nil {
		e.t.Fatal(err)
	}
	return mc
}

func (e *cleanupEnv) deny() {
	e.t.Helper()
	mc := e.cluster()
	mc.Spec.HubAcceptsClient = false
	if err := e.c.Update(context.Background(), mc); err != nil {
		e.t.Fatal(err)
	}
}

// delete deletes the cluster and returns when: the fake API server stamps the deletion with its
// own clock, from which the hub's timeout runs.
func (e *cleanupEnv) delete() time.Time {
	e.t.Helper()
	if err := e.c.Delete(context.Background(), e.cluster()); err != nil {
		e.t.Fatal(err)
	}
	at := e.cluster().DeletionTimestamp.Time
	e.clock.SetTime(at)
	return at
}

func (e *cleanupEnv) create(objs ...client.Object) {
	e.t.Helper()
	for _, o := range objs {
		if err := e.c.Create(context.Background(), o); err != nil {
			e.t.Fatal(err)
		}
	}
}

// agentFinishes is the work agent removing its finalizer from a deleted work.
func (e *cleanupEnv) agentFinishes(name string) {
	e.t.Helper()
	w := &workv1.ManifestWork{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "gpu-east", Name: name}, w); err != nil {
		e.t.Fatal(err)
	}
	if w.DeletionTimestamp.IsZero() {
		e.t.Fatalf("work %s was not deleted by the hub", name)
	}
	controllerutil.RemoveFinalizer(w, workv1.ManifestWorkFinalizer)
	if err := e.c.Update(context.Background(), w); err != nil {
		e.t.Fatal(err)
	}
}

// cleanupState is what the tests judge after a pass.
type cleanupState struct {
	Namespace, ClusterFinalizer bool
	// Role: "absent", "agent" (the accepted agent's rules), "works only"; with its finalizer "+held".
	Role, RoleBinding string
	// Works and Addons: name -> "live", "deleting", "deleting, held" (the agent's finalizer), with
	// any other finalizer after a slash.
	Works, Addons map[string]string
	// Condition: type=status/reason of the condition the hub says the cleanup in.
	Condition string
}

func (e *cleanupEnv) state(conditionType string) cleanupState {
	e.t.Helper()
	ctx := context.Background()
	s := cleanupState{Works: map[string]string{}, Addons: map[string]string{}}
	mc := &clusterv1.ManagedCluster{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: "gpu-east"}, mc); err == nil {
		s.ClusterFinalizer = controllerutil.ContainsFinalizer(mc, CleanupFinalizer)
		if c := meta.FindStatusCondition(mc.Status.Conditions, conditionType); c != nil {
			s.Condition = c.Type + "=" + string(c.Status) + "/" + c.Reason
		}
	}
	s.Namespace = e.c.Get(ctx, client.ObjectKey{Name: "gpu-east"}, &corev1.Namespace{}) == nil
	key := client.ObjectKey{Namespace: "gpu-east", Name: clusteridentity.RoleName("gpu-east")}
	role := &rbacv1.Role{}
	s.Role = "absent"
	if err := e.c.Get(ctx, key, role); err == nil {
		s.Role = "agent"
		if cmp.Equal(role.Rules, workCleanupRules()) {
			s.Role = "works only"
		}
		if controllerutil.ContainsFinalizer(role, AccessFinalizer) {
			s.Role += "+held"
		}
	} else if !apierrors.IsNotFound(err) {
		e.t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{}
	s.RoleBinding = "absent"
	if err := e.c.Get(ctx, key, binding); err == nil {
		s.RoleBinding = "present"
		if controllerutil.ContainsFinalizer(binding, AccessFinalizer) {
			s.RoleBinding += "+held"
		}
	}
	describe := func(o client.Object) string {
		d := "live"
		if !o.GetDeletionTimestamp().IsZero() {
			d = "deleting"
		}
		for _, f := range o.GetFinalizers() {
			if f == workv1.ManifestWorkFinalizer {
				d += ", held"
			} else {
				d += "/" + f
			}
		}
		return d
	}
	works := &workv1.ManifestWorkList{}
	addons := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := e.c.List(ctx, works); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.List(ctx, addons); err != nil {
		e.t.Fatal(err)
	}
	for i := range works.Items {
		s.Works[works.Items[i].Name] = describe(&works.Items[i])
	}
	for i := range addons.Items {
		s.Addons[addons.Items[i].Name] = describe(&addons.Items[i])
	}
	return s
}

func heldWork(name string, finalizers ...string) *workv1.ManifestWork {
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: name,
		Finalizers: append([]string{workv1.ManifestWorkFinalizer}, finalizers...)}}
}

func TestDenialKeepsWorkAccessUntilWorksAreGone(t *testing.T) {
	e := newCleanupEnv(t)
	accepted := cleanupState{Namespace: true, ClusterFinalizer: true, Role: "agent+held", RoleBinding: "present+held",
		Works: map[string]string{"multikueue": "live, held"}, Addons: map[string]string{},
		Condition: clusterv1.ManagedClusterConditionHubAccepted + "=True/" + ReasonAccepted}
	e.create(heldWork("multikueue"))
	if diff := cmp.Diff(accepted, e.state(clusterv1.ManagedClusterConditionHubAccepted)); diff != "" {
		t.Fatalf("accepted (-want +got):\n%s", diff)
	}

	e.deny()
	e.clock.SetTime(t0.Add(time.Minute))
	if got := e.reconcile(); got.RequeueAfter != cleanupTimeout {
		t.Errorf("requeue after %v, want the timeout %v", got.RequeueAfter, cleanupTimeout)
	}
	waiting := cleanupState{Namespace: true, ClusterFinalizer: true, Role: "works only+held", RoleBinding: "present+held",
		Works: map[string]string{"multikueue": "deleting, held"}, Addons: map[string]string{},
		Condition: clusterv1.ManagedClusterConditionHubAccepted + "=False/" + ReasonDenied}
	if diff := cmp.Diff(waiting, e.state(clusterv1.ManagedClusterConditionHubAccepted)); diff != "" {
		t.Fatalf("denied, the work not yet removed by the agent (-want +got):\n%s", diff)
	}
	msg := meta.FindStatusCondition(e.cluster().Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted).Message
	if !strings.Contains(msg, "waiting for the agent to remove from the cluster what 1 ManifestWork (multikueue) applied") {
		t.Errorf("condition message %q does not say what the hub waits for", msg)
	}
	// A second pass later, before the timeout, changes nothing and waits for the rest of it.
	e.clock.SetTime(t0.Add(3 * time.Minute))
	if got := e.reconcile(); got.RequeueAfter != 3*time.Minute {
		t.Errorf("requeue after %v, want the rest of the timeout, 3m", got.RequeueAfter)
	}
	if diff := cmp.Diff(waiting, e.state(clusterv1.ManagedClusterConditionHubAccepted)); diff != "" {
		t.Fatalf("denied, second pass (-want +got):\n%s", diff)
	}

	e.agentFinishes("multikueue")
	e.reconcile()
	done := cleanupState{Role: "works only", RoleBinding: "absent", Works: map[string]string{}, Addons: map[string]string{},
		Condition: clusterv1.ManagedClusterConditionHubAccepted + "=False/" + ReasonDenied}
	if diff := cmp.Diff(done, e.state(clusterv1.ManagedClusterConditionHubAccepted)); diff != "" {
		t.Errorf("denied, works gone (-want +got):\n%s", diff)
	}
}

func TestDenialForcedAfterTimeout(t *testing.T) {
	e := newCleanupEnv(t)
	// Another controller's finalizer is not the hub's to remove.
	e.create(heldWork("gone-agent"), heldWork("shared", "example.com/keep"))
	e.deny()
	e.reconcile()
	e.clock.SetTime(t0.Add(cleanupTimeout))
	e.reconcile()
	want := cleanupState{Role: "works only", RoleBinding: "absent",
		Works: map[string]string{"shared": "deleting/example.com/keep"}, Addons: map[string]string{},
		Condition: clusterv1.ManagedClusterConditionHubAccepted + "=False/" + ReasonDenied}
	if diff := cmp.Diff(want, e.state(clusterv1.ManagedClusterConditionHubAccepted)); diff != "" {
		t.Errorf("after the timeout (-want +got):\n%s", diff)
	}
	// The namespace is gone (the fake client deletes at once); what was forced stays said.
	e.reconcile()
	msg := meta.FindStatusCondition(e.cluster().Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted).Message
	if want := "the agent did not remove what 2 ManifestWorks (gone-agent, shared) applied within 5m0s: the hub removed their finalizer"; !strings.Contains(msg, want) {
		t.Errorf("condition message %q, want it to contain %q", msg, want)
	}
}

func TestDeletionCleansUpAddOnsThenWorks(t *testing.T) {
	e := newCleanupEnv(t)
	addon := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "gpu",
		Finalizers: []string{"addon.example.com/pre-delete"}}}
	e.create(addon, heldWork("addon-gpu-deploy-0"))
	e.delete()
	e.reconcile()
	deleting := clusterv1.ManagedClusterConditionDeleting + "=False/" + clusterv1.ConditionDeletingReasonResourceRemaining
	want := cleanupState{Namespace: true, ClusterFinalizer: true, Role: "works only+held", RoleBinding: "present+held",
		Works:     map[string]string{"addon-gpu-deploy-0": "live, held"},
		Addons:    map[string]string{"gpu": "deleting/addon.example.com/pre-delete"},
		Condition: deleting}
	if diff := cmp.Diff(want, e.state(clusterv1.ManagedClusterConditionDeleting)); diff != "" {
		t.Fatalf("deleted, add-on being deleted (-want +got):\n%s", diff)
	}

	// The add-on's manager finishes: its work goes next.
	a := &addonv1alpha1.ManagedClusterAddOn{}
	if err := e.c.Get(context.Background(), client.ObjectKeyFromObject(addon), a); err != nil {
		t.Fatal(err)
	}
	a.Finalizers = nil
	if err := e.c.Update(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	want.Addons, want.Works = map[string]string{}, map[string]string{"addon-gpu-deploy-0": "deleting, held"}
	if diff := cmp.Diff(want, e.state(clusterv1.ManagedClusterConditionDeleting)); diff != "" {
		t.Fatalf("deleted, add-on gone (-want +got):\n%s", diff)
	}

	e.agentFinishes("addon-gpu-deploy-0")
	e.reconcile()
	mc := &clusterv1.ManagedCluster{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Name: "gpu-east"}, mc); !apierrors.IsNotFound(err) {
		t.Errorf("the ManagedCluster is still there (%v, finalizers %v): want it gone once its works are", err, mc.Finalizers)
	}
	if got := e.state(""); got.Namespace || got.RoleBinding != "absent" {
		t.Errorf("after deletion: namespace %v, binding %s; want both gone", got.Namespace, got.RoleBinding)
	}
}

func TestDeletionForcedAfterTimeout(t *testing.T) {
	e := newCleanupEnv(t)
	e.create(heldWork("w"))
	deleted := e.delete()
	e.clock.SetTime(deleted.Add(time.Minute))
	if got := e.reconcile(); got.RequeueAfter != cleanupTimeout-time.Minute {
		t.Errorf("requeue after %v, want %v (the deletion's timestamp plus the timeout)", got.RequeueAfter, cleanupTimeout-time.Minute)
	}
	e.clock.SetTime(deleted.Add(cleanupTimeout))
	e.reconcile()
	if err := e.c.Get(context.Background(), client.ObjectKey{Name: "gpu-east"}, &clusterv1.ManagedCluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ManagedCluster after the timeout: %v, want it gone", err)
	}
	if got := e.state(""); len(got.Works) != 0 || got.Namespace {
		t.Errorf("after the timeout: works %v, namespace %v; want none", got.Works, got.Namespace)
	}
}

// A namespace deleted by someone while its cluster is accepted is held by the agent's access
// until the works are gone, and then released, so its deletion completes.
func TestNamespaceDeletedWhileAcceptedIsReleasedOnceWorksAreGone(t *testing.T) {
	e := newCleanupEnv(t)
	e.create(heldWork("w"))
	ns := &corev1.Namespace{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Name: "gpu-east"}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Finalizers = []string{"example.com/namespace-controller"} // the fake API server has no namespace controller
	if err := e.c.Update(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	if got := e.reconcile(); got.RequeueAfter <= 0 {
		t.Errorf("requeue after %v, want the cleanup timeout's rest", got.RequeueAfter)
	}
	want := cleanupState{Namespace: true, ClusterFinalizer: true, Role: "works only+held", RoleBinding: "present+held",
		Works: map[string]string{"w": "deleting, held"}, Addons: map[string]string{},
		Condition: clusterv1.ManagedClusterConditionHubAccepted + "=True/" + ReasonAccepted}
	if diff := cmp.Diff(want, e.state(clusterv1.ManagedClusterConditionHubAccepted)); diff != "" {
		t.Fatalf("namespace deleted, work held (-want +got):\n%s", diff)
	}
	e.agentFinishes("w")
	e.reconcile()
	want.Role, want.RoleBinding, want.Works = "works only", "present", map[string]string{}
	if diff := cmp.Diff(want, e.state(clusterv1.ManagedClusterConditionHubAccepted)); diff != "" {
		t.Errorf("namespace deleted, works gone (-want +got):\n%s", diff)
	}
}

// The finalizer that keeps the agent's access during a cleanup must not keep a binding deleted
// by mistake from being made again while the cluster is accepted.
func TestBindingDeletedByMistakeIsMadeAgain(t *testing.T) {
	e := newCleanupEnv(t)
	key := client.ObjectKey{Namespace: "gpu-east", Name: clusteridentity.RoleName("gpu-east")}
	old := &rbacv1.RoleBinding{}
	if err := e.c.Get(context.Background(), key, old); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	e.reconcile() // lets it go
	e.reconcile() // makes it again (its deletion event, in a running hub)
	got := &rbacv1.RoleBinding{}
	if err := e.c.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	// (The fake API server gives no UIDs: a binding not being deleted is the new one.)
	if !got.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(got, AccessFinalizer) {
		t.Errorf("binding deleting %v, finalizers %v: want a new one, held", !got.DeletionTimestamp.IsZero(), got.Finalizers)
	}
}
