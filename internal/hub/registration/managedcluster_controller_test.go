package registration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// state is what the hub holds for cluster gpu-east after a reconcile, reduced to what the tests
// judge.
type state struct {
	Finalizer bool
	// Namespace: "absent", "hub's" (made for the cluster), or "someone else's".
	Namespace          string
	NamespaceLabels    map[string]string
	ClusterRoleRules   int // rules of the agent's cluster role; -1 when absent
	Role, RoleBinding  bool
	Lease              bool
	Accepted, Reason   string // the HubAcceptedManagedCluster condition
	ClusterRoleForeign bool   // a cluster role of the agent's name that is not the hub's is still there
}

func observe(t *testing.T, c client.Client, mc *clusterv1.ManagedCluster) state {
	t.Helper()
	ctx := context.Background()
	var s state
	got := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: mc.Name}, got); err == nil {
		s.Finalizer = len(got.Finalizers) > 0 && got.Finalizers[len(got.Finalizers)-1] == CleanupFinalizer
		if cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); cond != nil {
			s.Accepted, s.Reason = string(cond.Status), cond.Reason
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{}
	switch err := c.Get(ctx, client.ObjectKey{Name: mc.Name}, ns); {
	case apierrors.IsNotFound(err):
		s.Namespace = "absent"
	case err != nil:
		t.Fatal(err)
	case ownedBy(ns, mc):
		s.Namespace, s.NamespaceLabels = "hub's", ns.Labels
	default:
		s.Namespace, s.NamespaceLabels = "someone else's", ns.Labels
	}
	cr := &rbacv1.ClusterRole{}
	s.ClusterRoleRules = -1
	if err := c.Get(ctx, client.ObjectKey{Name: clusteridentity.ClusterRoleName(mc.Name)}, cr); err == nil {
		if ownedBy(cr, mc) {
			s.ClusterRoleRules = len(cr.Rules)
		} else {
			s.ClusterRoleForeign = true
		}
	}
	exists := func(obj client.Object, key client.ObjectKey) bool {
		err := c.Get(ctx, key, obj)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	role := client.ObjectKey{Namespace: mc.Name, Name: clusteridentity.RoleName(mc.Name)}
	s.Role = exists(&rbacv1.Role{}, role)
	s.RoleBinding = exists(&rbacv1.RoleBinding{}, role)
	s.Lease = exists(&coordinationv1.Lease{}, client.ObjectKey{Namespace: mc.Name, Name: clusterv1.ManagedClusterLeaseName})
	return s
}

func TestManagedClusterReconciler(t *testing.T) {
	mc := makeCluster("gpu-east")
	hubs := ownerRef(mc.Obj())
	ours := map[string]string{clusteridentity.ClusterNameLabel: "gpu-east"}
	agentRole := func(owners ...metav1.OwnerReference) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: clusteridentity.RoleName("gpu-east"), Namespace: "gpu-east", OwnerReferences: owners}}
	}
	agentBinding := func(owners ...metav1.OwnerReference) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: clusteridentity.RoleName("gpu-east"), Namespace: "gpu-east", OwnerReferences: owners},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: clusteridentity.RoleName("gpu-east")},
		}
	}
	cases := map[string]struct {
		cluster *apitest.ClusterWrapper
		objs    []client.Object
		want    state
	}{
		"a new cluster: read its own ManagedCluster, nothing else, no finalizer": {
			cluster: makeCluster("gpu-east"),
			want:    state{Namespace: "absent", ClusterRoleRules: 1},
		},
		"a new cluster named after a team's namespace leaves it alone": {
			cluster: makeCluster("gpu-east"),
			objs:    []client.Object{namespace("gpu-east"), agentBinding()},
			want:    state{Namespace: "someone else's", ClusterRoleRules: 1, RoleBinding: true},
		},
		"accepted: namespace, role, binding and lease, all the hub's": {
			cluster: makeCluster("gpu-east").Accepted(),
			want: state{
				Finalizer: true, Namespace: "hub's", NamespaceLabels: ours, ClusterRoleRules: 3,
				Role: true, RoleBinding: true, Lease: true, Accepted: "True", Reason: ReasonAccepted,
			},
		},
		"accepted, but the namespace is someone else's: not adopted, nothing granted": {
			cluster: makeCluster("gpu-east").Accepted(),
			objs:    []client.Object{namespace("gpu-east")},
			want: state{
				Namespace: "someone else's", ClusterRoleRules: 1, Accepted: "False", Reason: ReasonNotOwned,
			},
		},
		"accepted, but a role of the agent's name is someone else's": {
			cluster: makeCluster("gpu-east").Accepted(),
			objs:    []client.Object{agentRole()},
			want: state{
				Namespace: "absent", ClusterRoleRules: 1, Role: true, Accepted: "False", Reason: ReasonNotOwned,
			},
		},
		"accepted, but the cluster role of the agent's name is someone else's": {
			cluster: makeCluster("gpu-east").Accepted(),
			objs: []client.Object{&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusteridentity.ClusterRoleName("gpu-east")},
				Rules: []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}}},
			want: state{Namespace: "absent", ClusterRoleRules: -1, ClusterRoleForeign: true, Accepted: "False", Reason: ReasonNotOwned},
		},
		"denied after acceptance: the hub's namespace and binding go, and the finalizer": {
			cluster: makeCluster("gpu-east").Finalizer(CleanupFinalizer),
			objs:    []client.Object{namespace("gpu-east", hubs...), agentRole(hubs...), agentBinding(hubs...)},
			want:    state{Namespace: "absent", ClusterRoleRules: 1, Role: true},
		},
		"denied, and the namespace was someone else's all along": {
			cluster: makeCluster("gpu-east").Finalizer(CleanupFinalizer),
			objs:    []client.Object{namespace("gpu-east"), agentBinding()},
			want:    state{Namespace: "someone else's", ClusterRoleRules: 1, RoleBinding: true},
		},
		"deleted: everything the hub made goes, the finalizer last": {
			cluster: makeCluster("gpu-east").Accepted().Finalizer(CleanupFinalizer).Deleting(t0),
			objs: []client.Object{namespace("gpu-east", hubs...), agentBinding(hubs...),
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusteridentity.ClusterRoleName("gpu-east"), OwnerReferences: hubs}}},
			want: state{Namespace: "absent", ClusterRoleRules: -1},
		},
		"deleted, with a namespace of its name that is not the hub's": {
			cluster: makeCluster("gpu-east").Accepted().Finalizer(CleanupFinalizer).Deleting(t0),
			objs:    []client.Object{namespace("gpu-east"), agentBinding()},
			want:    state{Namespace: "someone else's", ClusterRoleRules: -1, RoleBinding: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc := tc.cluster.Obj()
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).
				WithObjects(append(tc.objs, mc)...).WithStatusSubresource(mc).Build()
			r := &ManagedClusterReconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(t0)}
			req := reconcile.Request{NamespacedName: types.NamespacedName{Name: mc.Name}}
			// Twice: the second pass must find nothing left to do and change nothing.
			for range 2 {
				if _, err := r.Reconcile(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, observe(t, c, mc)); diff != "" {
				t.Errorf("hub state (-want +got):\n%s", diff)
			}
		})
	}
}
