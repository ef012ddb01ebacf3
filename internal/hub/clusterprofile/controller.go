package clusterprofile

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
)

// Reconciler keeps the ClusterProfiles of one namespace, the request's Namespace (its Name is
// empty), in line with the sets bound there.
type Reconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
	// AllowLocal lets the hub's access provider name a loopback or link-local address of a
	// cluster's API server (local fleets, where every spoke listens on 127.0.0.1); metadata
	// addresses are refused always.
	AllowLocal bool
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the reconciler. It lists bindings by clusterset.BindingClusterSetIndex,
// which clusterset.BindingReconciler registers: both must run in the same manager.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterprofile").
		// Spec changes and Bound condition changes both matter.
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(namespaceOf)).
		// Creation and deletion of a set reach us through its bindings' Bound condition; only a
		// selector change does not.
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.namespacesBindingSet),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Old and new objects are both mapped, so the namespaces of a set the cluster leaves are
		// requeued as well.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.namespacesOfCluster),
			builder.WithPredicates(profileInputsChanged)).
		// Our own writes come back once and find nothing to do; a user's profile going away may
		// free a name we want.
		Watches(&multiclusterv1alpha1.ClusterProfile{}, handler.EnqueueRequestsFromMapFunc(namespaceOf)).
		Complete(r)
}

// profileInputsChanged passes ManagedCluster updates that change set membership (labels), deletion
// or what a profile shows (its status, and the acceptance and addresses its access provider comes
// from); agents also update capacity and other conditions, which it ignores.
var profileInputsChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*clusterv1.ManagedCluster)
	n, okNew := e.ObjectNew.(*clusterv1.ManagedCluster)
	if !okOld || !okNew {
		return true
	}
	return !maps.Equal(o.Labels, n.Labels) ||
		o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() ||
		o.Spec.HubAcceptsClient != n.Spec.HubAcceptsClient ||
		!equality.Semantic.DeepEqual(o.Spec.ManagedClusterClientConfigs, n.Spec.ManagedClusterClientConfigs) ||
		!equality.Semantic.DeepEqual(statusFor(o), statusFor(n))
}}

func namespaceOf(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace()}}}
}

// namespacesBindingSet maps a set to the namespaces of the bindings that name it.
func (r *Reconciler) namespacesBindingSet(ctx context.Context, obj client.Object) []reconcile.Request {
	nss := map[string]bool{}
	if err := r.bindingNamespaces(ctx, obj.GetName(), nss); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterSetBindings to requeue for a set change", "set", obj.GetName())
	}
	return requests(nss)
}

// namespacesOfCluster maps a cluster to the namespaces binding any set it is in.
func (r *Reconciler) namespacesOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	mc, ok := obj.(*clusterv1.ManagedCluster)
	if !ok {
		return nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", mc.Name)
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets, client.UnsafeDisableDeepCopy); err != nil {
		log.Error(err, "listing ManagedClusterSets to requeue for a cluster change")
		return nil
	}
	nss := map[string]bool{}
	for _, set := range clusterset.SetsOf(mc, sets.Items) {
		if err := r.bindingNamespaces(ctx, set, nss); err != nil {
			log.Error(err, "listing ManagedClusterSetBindings to requeue for a cluster change", "set", set)
		}
	}
	return requests(nss)
}

// bindingNamespaces adds to nss the namespaces of the bindings naming set.
func (r *Reconciler) bindingNamespaces(ctx context.Context, set string, nss map[string]bool) error {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.MatchingFields{clusterset.BindingClusterSetIndex: set}, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	for i := range bindings.Items {
		nss[bindings.Items[i].Namespace] = true
	}
	return nil
}

func requests(nss map[string]bool) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(nss))
	for ns := range nss {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns}})
	}
	return reqs
}

// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch

// Reconcile makes the hub's ClusterProfiles in a namespace match the sets bound there.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := req.Namespace
	desired, err := r.desired(ctx, ns)
	if err != nil {
		return reconcile.Result{}, err
	}
	profiles := &multiclusterv1alpha1.ClusterProfileList{}
	// The cache's own objects, read-only: a namespace bound to a set of 10,000 clusters holds
	// 10,000 profiles, and copying them all at every reconcile was most of the hub's work. Every
	// write below works on a copy.
	if err := r.Client.List(ctx, profiles, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	existing := map[string]*multiclusterv1alpha1.ClusterProfile{}
	for i := range profiles.Items {
		p := &profiles.Items[i]
		_, want := desired[p.Name]
		switch {
		case !managed(p):
			if want {
				// Not ours to replace: the cluster goes without a profile here until the owner
				// deletes it, which requeues the namespace.
				log.Info("a ClusterProfile not managed by the hub has the cluster's name; leaving the cluster without a hub profile in this namespace",
					"clusterProfile", p.Name, "manager", p.Labels[multiclusterv1alpha1.LabelClusterManagerKey])
				delete(desired, p.Name)
			}
		case !p.DeletionTimestamp.IsZero():
			delete(desired, p.Name) // recreated at the requeue its removal causes
		case !want:
			errs = append(errs, r.delete(ctx, p))
		case p.Spec.ClusterManager.Name != multiclusterv1alpha1.ClusterManagerName:
			// Labeled ours but naming another manager: spec.clusterManager is immutable, so the
			// profile is replaced, at the requeue its deletion causes.
			errs = append(errs, r.delete(ctx, p))
			delete(desired, p.Name)
		default:
			existing[p.Name] = p
		}
	}
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		if cur, ok := existing[name]; ok {
			errs = append(errs, r.update(ctx, cur, desired[name]))
		} else {
			errs = append(errs, r.create(ctx, desired[name]))
		}
	}
	return reconcile.Result{}, kerrors.NewAggregate(errs)
}

// desired reads the namespace's bindings and, if any is bound, the sets and clusters, and
// returns the profiles the namespace should hold.
func (r *Reconciler) desired(ctx context.Context, ns string) (map[string]*multiclusterv1alpha1.ClusterProfile, error) {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	// Read-only use of the cache's objects throughout: desiredProfiles copies what it keeps.
	if err := r.Client.List(ctx, bindings, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	if len(boundSets(bindings.Items)) == 0 {
		return nil, nil
	}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return desiredProfiles(ns, bindings.Items, sets.Items, clusters.Items, r.AllowLocal), nil
}

// create creates profile want, then writes its status (the API ignores status on create).
func (r *Reconciler) create(ctx context.Context, want *multiclusterv1alpha1.ClusterProfile) error {
	p := want.DeepCopy()
	p.Status = multiclusterv1alpha1.ClusterProfileStatus{}
	if err := r.Client.Create(ctx, p); err != nil {
		switch {
		case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			return nil // its bindings go with it, and with them the need for profiles
		case apierrors.IsAlreadyExists(err):
			return nil // not in the cache yet: its creation requeues the namespace
		}
		return fmt.Errorf("creating ClusterProfile %s/%s: %w", p.Namespace, p.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("created ClusterProfile", "clusterProfile", p.Name)
	return r.updateStatus(ctx, p, want.Status)
}

// update brings cur's labels, display name and status in line with want.
// cur is the cache's object: it is only read, and copied when it has to change.
func (r *Reconciler) update(ctx context.Context, cur, want *multiclusterv1alpha1.ClusterProfile) error {
	if metaDiffers(cur, want) {
		changed := cur.DeepCopy()
		mergeMeta(changed, want)
		// The optimistic lock keeps labels someone added meanwhile: the patch conflicts and the retry sees them.
		if err := r.Client.Patch(ctx, changed, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("updating ClusterProfile %s/%s: %w", cur.Namespace, cur.Name, err)
		}
		cur = changed
	}
	return r.updateStatus(ctx, cur, want.Status)
}

// updateStatus writes the status fields the hub owns, if they changed.
func (r *Reconciler) updateStatus(ctx context.Context, cur *multiclusterv1alpha1.ClusterProfile, want multiclusterv1alpha1.ClusterProfileStatus) error {
	st, changed := mergeStatus(cur.Status, want, cur.Generation, metav1.NewTime(r.Clock.Now()))
	if !changed {
		return nil
	}
	desired := cur.DeepCopy()
	desired.Status = st
	// The optimistic lock makes a stale cached copy fail with a conflict (and a retry) instead of
	// overwriting conditions or access providers other writers set since.
	if err := r.Client.Status().Patch(ctx, desired, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("updating the status of ClusterProfile %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	return nil
}

// delete deletes a hub profile, only the one that was read: a profile recreated meanwhile under
// the same name, perhaps by someone else, is left alone.
func (r *Reconciler) delete(ctx context.Context, p *multiclusterv1alpha1.ClusterProfile) error {
	err := r.Client.Delete(ctx, p.DeepCopy(), client.Preconditions{UID: &p.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting ClusterProfile %s/%s: %w", p.Namespace, p.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("deleted ClusterProfile", "clusterProfile", p.Name)
	return nil
}
