package managedserviceaccount

import (
	"context"
	"errors"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/config/rbac"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// TokenBinding names the RoleBinding in a cluster namespace that gives the cluster's agents
// ClusterRole rbac.ManagedServiceAccountAgentName there.
const TokenBinding = "flotilla-managed-serviceaccount-agent"

// Reconciler keeps, per namespace, the agent's binding and the ttl of ManagedServiceAccounts.
// Requests name the namespace (Name; Namespace is empty).
type Reconciler struct {
	client.Client
	Clock clock.PassiveClock
}

// +kubebuilder:rbac:groups=authentication.open-cluster-management.io,resources=managedserviceaccounts,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=authentication.open-cluster-management.io,resources=managedserviceaccounts/status,verbs=update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,resourceNames=flotilla-managed-serviceaccount-agent,verbs=bind

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedserviceaccount").
		Watches(&authv1beta1.ManagedServiceAccount{}, byNamespace).
		Watches(&rbacv1.RoleBinding{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if o.GetName() != TokenBinding {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
		})).
		// A cluster that goes takes its namespace's binding with it. Only its coming and going
		// matter: the status updates of a thousand agents are not this controller's business.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
		}), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		}})).
		Complete(r)
}

// Reconcile reads a namespace's ManagedServiceAccounts, decides, and applies the plan.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := req.Name
	var list authv1beta1.ManagedServiceAccountList
	if err := r.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return ctrl.Result{}, err
	}
	mc := &clusterv1.ManagedCluster{}
	err := r.Get(ctx, client.ObjectKey{Name: ns}, mc)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	cluster := err == nil && mc.DeletionTimestamp.IsZero()
	p := decide(list.Items, cluster, r.Clock.Now())
	if err := r.apply(ctx, ns, list.Items, p); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

// apply carries p out: expired ManagedServiceAccounts deleted, the binding kept or removed,
// orphans told why nothing happens.
func (r *Reconciler) apply(ctx context.Context, ns string, msas []authv1beta1.ManagedServiceAccount, p plan) error {
	byName := map[string]*authv1beta1.ManagedServiceAccount{}
	for i := range msas {
		byName[msas[i].Name] = &msas[i]
	}
	var errs []error
	for _, name := range p.expired {
		m := byName[name]
		ctrl.LoggerFrom(ctx).Info("deleting a ManagedServiceAccount whose ttlSecondsAfterCreation has passed", "managedServiceAccount", ns+"/"+name)
		errs = append(errs, client.IgnoreNotFound(r.Delete(ctx, m, client.Preconditions{UID: &m.UID})))
	}
	errs = append(errs, r.keepBinding(ctx, ns, p.bind))
	for _, name := range p.orphans {
		errs = append(errs, r.writeCondition(ctx, byName[name], notAClusterNamespace(ns)))
	}
	return errors.Join(errs...)
}

// keepBinding makes RoleBinding TokenBinding, to ClusterRole rbac.ManagedServiceAccountAgentName
// for the cluster's agents, when want, and removes it otherwise. A RoleBinding of that name the
// hub did not make is left alone, and said so.
func (r *Reconciler) keepBinding(ctx context.Context, ns string, want bool) error {
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: TokenBinding, Labels: map[string]string{builtinaddon.Label: authv1beta1.AddOnName}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rbac.ManagedServiceAccountAgentName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: clusteridentity.Group(ns)}},
	}
	got := &rbacv1.RoleBinding{}
	err := r.Get(ctx, client.ObjectKeyFromObject(b), got)
	switch {
	case apierrors.IsNotFound(err):
		if !want {
			return nil
		}
		if err := r.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("binding ClusterRole %s for the agents of cluster %s: %w", b.RoleRef.Name, ns, err)
		}
		return nil
	case err != nil:
		return err
	case got.Labels[builtinaddon.Label] != authv1beta1.AddOnName:
		if want {
			return fmt.Errorf("RoleBinding %s/%s exists and was not made by the hub (label %s=%s): the agent of cluster %s cannot write the token Secrets of its ManagedServiceAccounts until it is deleted",
				ns, TokenBinding, builtinaddon.Label, authv1beta1.AddOnName, ns)
		}
		return nil
	case !want:
		return client.IgnoreNotFound(r.Delete(ctx, got, client.Preconditions{UID: &got.UID}))
	case got.RoleRef != b.RoleRef:
		// The role of a binding cannot change: a new one replaces it.
		if err := r.Delete(ctx, got, client.Preconditions{UID: &got.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
		return r.Create(ctx, b)
	case !slices.Equal(got.Subjects, b.Subjects):
		got.Subjects = b.Subjects
		return r.Update(ctx, got)
	}
	return nil
}

// writeCondition sets c on m when m says something else.
func (r *Reconciler) writeCondition(ctx context.Context, m *authv1beta1.ManagedServiceAccount, c metav1.Condition) error {
	if cur := meta.FindStatusCondition(m.Status.Conditions, c.Type); cur != nil && cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message {
		return nil
	}
	upd := m.DeepCopy()
	c.LastTransitionTime = metav1.NewTime(r.Clock.Now())
	meta.SetStatusCondition(&upd.Status.Conditions, c)
	return client.IgnoreNotFound(r.Status().Patch(ctx, upd, client.MergeFromWithOptions(m, client.MergeFromWithOptimisticLock{})))
}
