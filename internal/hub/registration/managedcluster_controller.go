package registration

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/clusteridentity"
	"github.com/flotilla/flotilla/internal/conditions"
)

// CleanupFinalizer holds a ManagedCluster until its namespace and RBAC are removed.
const CleanupFinalizer = "cluster.open-cluster-management.io/api-resource-cleanup"

// Condition reasons the hub sets.
const (
	ReasonAccepted = "HubClusterAdminAccepted"
	ReasonDenied   = "HubClusterAdminDenied"
)

// ManagedClusterReconciler grants and revokes an agent's access as its cluster is accepted,
// denied or deleted.
type ManagedClusterReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

var _ reconcile.Reconciler = (*ManagedClusterReconciler)(nil)

// SetupWithManager registers the reconciler.
func (r *ManagedClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-registration").
		For(&clusterv1.ManagedCluster{}).
		Owns(&rbacv1.ClusterRole{}).
		Owns(&rbacv1.ClusterRoleBinding{}).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings;roles;rolebindings,verbs=get;list;watch;create;update;delete;escalate;bind
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create

// Reconcile makes a cluster's access match its acceptance.
func (r *ManagedClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		if err := r.revoke(ctx, mc.Name, true); err != nil {
			return reconcile.Result{}, err
		}
		if controllerutil.RemoveFinalizer(mc, CleanupFinalizer) {
			return reconcile.Result{}, r.Client.Update(ctx, mc)
		}
		return reconcile.Result{}, nil
	}
	if controllerutil.AddFinalizer(mc, CleanupFinalizer) {
		if err := r.Client.Update(ctx, mc); err != nil {
			return reconcile.Result{}, err
		}
	}
	accepted := mc.Spec.HubAcceptsClient
	if err := r.grantClusterScoped(ctx, mc, accepted); err != nil {
		return reconcile.Result{}, err
	}
	if accepted {
		if err := r.grantNamespaced(ctx, mc); err != nil {
			return reconcile.Result{}, err
		}
	} else if err := r.revoke(ctx, mc.Name, false); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.updateStatus(ctx, mc)
}

// grantClusterScoped writes the agent's ClusterRole and its binding, owned by the cluster.
func (r *ManagedClusterReconciler) grantClusterScoped(ctx context.Context, mc *clusterv1.ManagedCluster, accepted bool) error {
	name := clusteridentity.ClusterRoleName(mc.Name)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, role, func() error {
		role.Rules = clusterRules(mc.Name, accepted)
		return controllerutil.SetControllerReference(mc, role, r.Client.Scheme())
	}); err != nil {
		return fmt.Errorf("cluster role %s: %w", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, binding, func() error {
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
		binding.Subjects = groupSubject(mc.Name)
		return controllerutil.SetControllerReference(mc, binding, r.Client.Scheme())
	}); err != nil {
		return fmt.Errorf("cluster role binding %s: %w", name, err)
	}
	return nil
}

// grantNamespaced creates the cluster's namespace, the agent's role there and the lease it renews.
func (r *ManagedClusterReconciler) grantNamespaced(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mc.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, ns, func() error {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[clusteridentity.ClusterNameLabel] = mc.Name
		return nil
	}); err != nil {
		return fmt.Errorf("namespace %s: %w", mc.Name, err)
	}
	if ns.DeletionTimestamp != nil {
		return fmt.Errorf("namespace %s is still being deleted from an earlier denial; retrying", mc.Name)
	}
	name := clusteridentity.RoleName(mc.Name)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, role, func() error {
		role.Rules = namespaceRules()
		return controllerutil.SetControllerReference(mc, role, r.Client.Scheme())
	}); err != nil {
		return fmt.Errorf("role %s/%s: %w", mc.Name, name, err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, binding, func() error {
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
		binding.Subjects = groupSubject(mc.Name)
		return controllerutil.SetControllerReference(mc, binding, r.Client.Scheme())
	}); err != nil {
		return fmt.Errorf("role binding %s/%s: %w", mc.Name, name, err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: mc.Name}}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(lease), lease); apierrors.IsNotFound(err) {
		lease.Spec = coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(mc.Name),
			LeaseDurationSeconds: ptr.To(leaseDuration(mc)),
			RenewTime:            &metav1.MicroTime{Time: r.Clock.Now()},
		}
		if err := controllerutil.SetControllerReference(mc, lease, r.Client.Scheme()); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("lease %s/%s: %w", mc.Name, lease.Name, err)
		}
	} else if err != nil {
		return err
	}
	return nil
}

// revoke removes the agent's namespaced access and the namespace with everything in it; with all,
// also the cluster-scoped role (deletion). The ManagedCluster's credentials then authorize nothing.
func (r *ManagedClusterReconciler) revoke(ctx context.Context, cluster string, all bool) error {
	objs := []client.Object{
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusteridentity.RoleName(cluster), Namespace: cluster}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}},
	}
	if all {
		name := clusteridentity.ClusterRoleName(cluster)
		objs = append(objs,
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}},
		)
	}
	for _, o := range objs {
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("revoking cluster %s: deleting %T %s: %w", cluster, o, o.GetName(), err)
		}
	}
	return nil
}

func (r *ManagedClusterReconciler) updateStatus(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	desired := mc.DeepCopy()
	for _, c := range acceptanceConditions(mc) {
		c.LastTransitionTime = metav1.NewTime(r.Clock.Now()) // kept by SetStatusCondition unless the status changes
		meta.SetStatusCondition(&desired.Status.Conditions, c)
	}
	if conditions.Equal(mc.Status.Conditions, desired.Status.Conditions) {
		return nil
	}
	// The optimistic lock makes a stale cached copy fail with a conflict (and a retry) instead of
	// overwriting conditions other writers (the agent, the lease controller) set since.
	return r.Client.Status().Patch(ctx, desired, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{}))
}

// acceptanceConditions are the conditions the hub owns, computed from the spec alone.
func acceptanceConditions(mc *clusterv1.ManagedCluster) []metav1.Condition {
	if mc.Spec.HubAcceptsClient {
		return []metav1.Condition{{
			Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue,
			Reason: ReasonAccepted, Message: "the hub accepted the cluster: its agent has access to namespace " + mc.Name,
			ObservedGeneration: mc.Generation,
		}}
	}
	if meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) == nil {
		return nil // never accepted: nothing to say yet
	}
	return []metav1.Condition{{
		Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionFalse,
		Reason: ReasonDenied, Message: "the hub no longer accepts the cluster: its agent's access was revoked; set spec.hubAcceptsClient to true to accept it again",
		ObservedGeneration: mc.Generation,
	}}
}

func leaseDuration(mc *clusterv1.ManagedCluster) int32 {
	if mc.Spec.LeaseDurationSeconds > 0 {
		return mc.Spec.LeaseDurationSeconds
	}
	return clusterv1.DefaultLeaseDurationSeconds
}
