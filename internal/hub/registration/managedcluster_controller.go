package registration

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/core/conditions"
)

// CleanupFinalizer holds a ManagedCluster until its namespace and RBAC are removed.
const CleanupFinalizer = "cluster.open-cluster-management.io/api-resource-cleanup"

// Condition reasons the hub sets.
const (
	ReasonAccepted = "HubClusterAdminAccepted"
	ReasonDenied   = "HubClusterAdminDenied"
	// ReasonNotOwned: accepted, but the cluster's namespace or one of its roles exists and is not
	// the hub's, so the hub grants nothing.
	ReasonNotOwned = "HubClusterResourcesNotOwned"
)

// ManagedClusterReconciler grants and revokes an agent's access as its cluster is accepted,
// denied or deleted. It writes and deletes only what it created for the cluster and marked as its
// own (see owned.go), and watches all of it, so an object deleted or changed by mistake is
// restored at once.
type ManagedClusterReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
	// CleanupTimeout bounds the wait, after a denial or deletion, for the agent to remove what the
	// cluster's ManifestWorks applied (see cleanup.go); DefaultCleanupTimeout when zero.
	CleanupTimeout time.Duration
}

var _ reconcile.Reconciler = (*ManagedClusterReconciler)(nil)

// SetupWithManager registers the reconciler.
func (r *ManagedClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-registration").
		For(&clusterv1.ManagedCluster{}).
		Owns(&rbacv1.ClusterRole{}).
		Owns(&rbacv1.ClusterRoleBinding{}).
		Owns(&corev1.Namespace{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		// A denied or deleted cluster's cleanup goes on as its add-ons and works go (or come back).
		Watches(&workv1.ManifestWork{}, inNamespace, builder.WithPredicates(createdOrDeleted)).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, inNamespace, builder.WithPredicates(createdOrDeleted)).
		// The agent renews its lease every period: only a deleted lease needs the hub.
		Owns(&coordinationv1.Lease{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings;roles;rolebindings,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch;delete

// inNamespace maps an object in a cluster's namespace to the cluster of that name.
var inNamespace = handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
})

// createdOrDeleted passes creations and deletions only: a work's status changes matter not.
var createdOrDeleted = predicate.Funcs{
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// Reconcile makes a cluster's access match its acceptance.
func (r *ManagedClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return r.finishDeletion(ctx, mc)
	}

	// blocked is why an accepted cluster gets no access: an object the hub would write for it
	// exists and is not the hub's. It is looked for before anything is written, so that a
	// blocked cluster leaves no trace.
	var blocked *notOwnedError
	if mc.Spec.HubAcceptsClient {
		var err error
		if blocked, err = firstNotOwned(ctx, r.Client, mc, agentObjects(mc.Name)...); err != nil {
			return reconcile.Result{}, err
		}
	}
	granted := mc.Spec.HubAcceptsClient && blocked == nil
	if granted {
		// The finalizer comes first, so that everything the hub creates in the cluster's namespace
		// is cleaned up on deletion. A cluster that was never accepted has none: deleting it costs
		// the hub nothing, and its cluster-scoped role goes with it by garbage collection.
		if controllerutil.AddFinalizer(mc, CleanupFinalizer) {
			if err := r.Client.Update(ctx, mc); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	err := r.grantClusterScoped(ctx, mc, granted)
	if err == nil && granted {
		err = r.grantNamespaced(ctx, mc)
	}
	if te := (*terminatingError)(nil); errors.As(err, &te) {
		// Its deletion, or its works' cleanup, brings the cluster back here; the timeout too.
		ctrl.LoggerFrom(ctx).Info(te.Error(), "cluster", mc.Name)
		return reconcile.Result{RequeueAfter: cmp.Or(te.RequeueAfter, time.Second)}, nil
	}
	// An object that is someone else's, made since firstNotOwned looked or (for a cluster that is
	// not accepted) never looked for, blocks the grant and is left alone.
	if no := (*notOwnedError)(nil); errors.As(err, &no) {
		blocked, granted, err = cmp.Or(blocked, no), false, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	var cleanup cleanupPlan
	if !granted {
		// The agent keeps its work access until its works are gone (cleanup.go): only then are
		// its access, the namespace and the finalizer taken away.
		if cleanup, err = r.cleanUp(ctx, mc, deniedSince(mc, r.Clock.Now())); err != nil {
			return reconcile.Result{}, err
		}
		if cleanup.Done {
			if err := r.revoke(ctx, mc, false); err != nil {
				return reconcile.Result{}, err
			}
			if err := r.removeFinalizer(ctx, mc); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	return reconcile.Result{RequeueAfter: cleanup.RequeueAfter}, r.updateStatus(ctx, mc, blocked, cleanup)
}

// deniedSince is when the hub stopped granting mc access: when its HubAcceptedManagedCluster
// condition turned False, or now for a cluster this pass denies.
func deniedSince(mc *clusterv1.ManagedCluster, now time.Time) time.Time {
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); c != nil && c.Status == metav1.ConditionFalse {
		return c.LastTransitionTime.Time
	}
	return now
}

// finishDeletion cleans up a deleted cluster's namespace, then removes everything the hub made
// for it and, last, the finalizer. OCM's Deleting condition says what the hub waits for.
func (r *ManagedClusterReconciler) finishDeletion(ctx context.Context, mc *clusterv1.ManagedCluster) (reconcile.Result, error) {
	cleanup, err := r.cleanUp(ctx, mc, mc.DeletionTimestamp.Time)
	if err != nil {
		return reconcile.Result{}, err
	}
	if cleanup.Message != "" {
		reason := clusterv1.ConditionDeletingReasonResourceRemaining
		if len(cleanup.Release) > 0 {
			reason = ReasonCleanupForced
		}
		if err := r.setCondition(ctx, mc, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionDeleting, Status: metav1.ConditionFalse, Reason: reason,
			Message: cleanup.Message, ObservedGeneration: mc.Generation,
		}); err != nil {
			return reconcile.Result{}, err
		}
	}
	if !cleanup.Done {
		return reconcile.Result{RequeueAfter: cleanup.RequeueAfter}, nil
	}
	if err := r.revoke(ctx, mc, true); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.removeFinalizer(ctx, mc)
}

// agentObjects are the objects the hub makes for a cluster's agent, by name, but for the lease
// (the agent's to renew, in a namespace that is the hub's).
func agentObjects(cluster string) []client.Object {
	name, clusterName := clusteridentity.RoleName(cluster), clusteridentity.ClusterRoleName(cluster)
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterName}},
	}
}

func (r *ManagedClusterReconciler) removeFinalizer(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	if controllerutil.RemoveFinalizer(mc, CleanupFinalizer) {
		return r.Client.Update(ctx, mc)
	}
	return nil
}

// grantClusterScoped writes the agent's ClusterRole and its binding, owned by the cluster.
func (r *ManagedClusterReconciler) grantClusterScoped(ctx context.Context, mc *clusterv1.ManagedCluster, accepted bool) error {
	name := clusteridentity.ClusterRoleName(mc.Name)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := ensureOwned(ctx, r.Client, mc, role, func() { role.Rules = clusterRules(mc.Name, accepted) }); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return ensureOwned(ctx, r.Client, mc, binding, func() {
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
		binding.Subjects = groupSubject(mc.Name)
	})
}

// grantNamespaced creates the cluster's namespace, the agent's role there and the lease it renews.
// A namespace of the cluster's name that the hub did not create for this cluster is never taken
// over: the result is a *notOwnedError.
func (r *ManagedClusterReconciler) grantNamespaced(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mc.Name}}
	if err := ensureOwned(ctx, r.Client, mc, ns, func() { setLabel(ns, clusteridentity.ClusterNameLabel, mc.Name) }); err != nil {
		return err
	}
	if !ns.DeletionTimestamp.IsZero() {
		// Deleted by someone while the cluster is accepted, or left by an earlier denial: the
		// agent's works go first, as on denial, then the agent's access, so that the deletion
		// completes and the hub can grant access in a new namespace.
		p, err := r.cleanUp(ctx, mc, ns.DeletionTimestamp.Time)
		if err == nil && p.Done {
			err = r.releaseAccess(ctx, mc)
		}
		if err != nil {
			return err
		}
		return &terminatingError{Namespace: mc.Name, RequeueAfter: p.RequeueAfter}
	}
	name := clusteridentity.RoleName(mc.Name)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}}
	if err := ensureOwned(ctx, r.Client, mc, role, func() {
		role.Rules = namespaceRules()
		controllerutil.AddFinalizer(role, AccessFinalizer)
	}); err != nil {
		return err
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}}
	if err := ensureOwned(ctx, r.Client, mc, binding, func() {
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
		binding.Subjects = groupSubject(mc.Name)
		controllerutil.AddFinalizer(binding, AccessFinalizer)
	}); err != nil {
		return err
	}
	// A Role or RoleBinding deleted by mistake while the cluster is accepted would stay, held by
	// AccessFinalizer: the hub lets it go, and its deletion brings the cluster back here to make
	// it again.
	for _, obj := range []client.Object{role, binding} {
		if !obj.GetDeletionTimestamp().IsZero() && controllerutil.RemoveFinalizer(obj, AccessFinalizer) {
			if err := r.Client.Update(ctx, obj); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("releasing %s %s/%s to make it again: %w", kindOf(r.Client, obj), obj.GetNamespace(), obj.GetName(), err)
			}
		}
	}
	// The lease is created once; after that the agent renews it, and the namespace is the hub's,
	// so whatever lease is there is the one to renew.
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: mc.Name}}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(lease), lease)
	if !apierrors.IsNotFound(err) {
		return err
	}
	lease.Spec = coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(mc.Name),
		LeaseDurationSeconds: ptr.To(int32(mc.LeaseDuration().Seconds())),
		RenewTime:            &metav1.MicroTime{Time: r.Clock.Now()},
	}
	if err := controllerutil.SetControllerReference(mc, lease, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("lease %s/%s: %w", mc.Name, lease.Name, err)
	}
	return nil
}

// terminatingError says that the cluster's namespace is being deleted: the hub grants nothing in
// it, and grants access in a new one once it is gone.
type terminatingError struct {
	Namespace    string
	RequeueAfter time.Duration
}

func (e *terminatingError) Error() string {
	return fmt.Sprintf("namespace %s is being deleted; the hub grants the agent access in a new one once it is gone", e.Namespace)
}

func setLabel(obj metav1.Object, key, value string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	obj.SetLabels(labels)
}

// revoke removes the agent's namespaced access and the namespace with everything in it; with all,
// also the cluster-scoped role (deletion). The cluster's credentials then authorize nothing. Only
// what the hub created for this cluster is deleted.
func (r *ManagedClusterReconciler) revoke(ctx context.Context, mc *clusterv1.ManagedCluster, all bool) error {
	if err := r.releaseAccess(ctx, mc); err != nil {
		return fmt.Errorf("revoking the access of cluster %s: %w", mc.Name, err)
	}
	name := clusteridentity.RoleName(mc.Name)
	objs := []client.Object{
		// The binding first: access ends at once, before the namespace's slower deletion.
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mc.Name}},
	}
	if all {
		name := clusteridentity.ClusterRoleName(mc.Name)
		objs = append(objs,
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}},
		)
	}
	for _, o := range objs {
		if err := deleteOwned(ctx, r.Client, mc, o); err != nil {
			return fmt.Errorf("revoking the access of cluster %s: %w", mc.Name, err)
		}
	}
	return nil
}

func (r *ManagedClusterReconciler) updateStatus(ctx context.Context, mc *clusterv1.ManagedCluster, blocked *notOwnedError, cleanup cleanupPlan) error {
	return r.setCondition(ctx, mc, acceptanceConditions(mc, blocked, cleanup)...)
}

// setCondition writes conds into mc's status, if that changes it.
func (r *ManagedClusterReconciler) setCondition(ctx context.Context, mc *clusterv1.ManagedCluster, conds ...metav1.Condition) error {
	desired := mc.DeepCopy()
	for _, c := range conds {
		c.LastTransitionTime = metav1.NewTime(r.Clock.Now()) // kept by SetStatusCondition unless the status changes
		meta.SetStatusCondition(&desired.Status.Conditions, c)
	}
	if conditions.Equal(mc.Status.Conditions, desired.Status.Conditions) {
		return nil
	}
	// The optimistic lock makes a stale cached copy fail with a conflict (and a retry) instead of
	// overwriting conditions other writers (the agent, the lease controller) set since.
	if err := r.Client.Status().Patch(ctx, desired, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	*mc = *desired // the caller may write mc again (its finalizer)
	return nil
}

// acceptanceConditions are the conditions the hub owns, computed from the spec and from blocked,
// the object that kept the hub from granting an accepted cluster access.
func acceptanceConditions(mc *clusterv1.ManagedCluster, blocked *notOwnedError, cleanup cleanupPlan) []metav1.Condition {
	if mc.Spec.HubAcceptsClient && blocked != nil {
		return []metav1.Condition{{
			Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionFalse,
			Reason: ReasonNotOwned, Message: "the hub cannot grant the cluster's agent access: " + blocked.Error(),
			ObservedGeneration: mc.Generation,
		}}
	}
	if mc.Spec.HubAcceptsClient {
		return []metav1.Condition{{
			Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue,
			Reason: ReasonAccepted, Message: "the hub accepted the cluster: its agent has access to namespace " + mc.Name,
			ObservedGeneration: mc.Generation,
		}}
	}
	old := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
	if old == nil {
		return nil // never accepted: nothing to say yet
	}
	const again = "set spec.hubAcceptsClient to true to accept it again"
	msg := "the hub no longer accepts the cluster: its agent's access was revoked; " + again
	switch {
	case !cleanup.Done:
		msg = "the hub no longer accepts the cluster: " + cleanup.Message + "; then it revokes the agent's access and deletes namespace " + mc.Name
	case len(cleanup.Release) > 0:
		msg = "the hub no longer accepts the cluster: its agent's access was revoked, but " + cleanup.Message + "; " + again
	case old.Reason == ReasonDenied && strings.Contains(old.Message, forcedMarker):
		msg = old.Message // what was forced stays said until the cluster is accepted again
	}
	return []metav1.Condition{{
		Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionFalse,
		Reason: ReasonDenied, Message: msg, ObservedGeneration: mc.Generation,
	}}
}
