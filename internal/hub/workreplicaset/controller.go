package workreplicaset

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/conditions"
	"github.com/flotilla/flotilla/internal/core/rollout"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// Reconciler rolls each ManifestWorkReplicaSet's template out as ManifestWorks to the clusters its
// placements select.
type Reconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	Clock  clock.PassiveClock
	// MaxConcurrentReconciles bounds how many sets are reconciled at once (default 4).
	MaxConcurrentReconciles int
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// placementRefIndex indexes ManifestWorkReplicaSets by the Placements they name.
const placementRefIndex = "spec.placementRefs.name"

// SetupWithManager registers the reconciler, its index and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &workv1alpha1.ManifestWorkReplicaSet{}, placementRefIndex,
		func(o client.Object) []string {
			var names []string
			for _, p := range o.(*workv1alpha1.ManifestWorkReplicaSet).Spec.PlacementRefs {
				names = append(names, p.Name)
			}
			return names
		})
	if err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("workreplicaset").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		// Our status writes change neither the generation nor the labels (copied to the works).
		For(&workv1alpha1.ManifestWorkReplicaSet{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() }}))).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(forWork)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			p, ok := o.GetLabels()[clusterv1beta1.PlacementLabel]
			if !ok {
				return nil
			}
			return r.forPlacement(ctx, o.GetNamespace(), p)
		})).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.forPlacement(ctx, o.GetNamespace(), o.GetName())
		})).
		// A selected cluster accepted again, or its namespace made anew, gets its ManifestWork.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.allSets), builder.WithPredicates(delivery.Changed)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allSets), builder.WithPredicates(delivery.Changed)).
		Complete(r)
}

// allSets maps an object to every ManifestWorkReplicaSet: a cluster's acceptance changes seldom.
func (r *Reconciler) allSets(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := r.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManifestWorkReplicaSets")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for _, s := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
	return reqs
}

// forWork maps a ManifestWork to the set its label names.
func forWork(_ context.Context, o client.Object) []reconcile.Request {
	key, ok := setOfLabel(o.GetLabels()[SetLabel])
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// forPlacement maps a placement to the sets in its namespace that name it.
func (r *Reconciler) forPlacement(ctx context.Context, ns, placement string) []reconcile.Request {
	l := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := r.Client.List(ctx, l, client.InNamespace(ns), client.MatchingFields{placementRefIndex: placement}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the ManifestWorkReplicaSets of a placement", "namespace", ns, "placement", placement)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for _, s := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
	return reqs
}

// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets/status,verbs=update;patch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements;placementdecisions;managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Reconcile rolls one set out, or cleans up after it when it is deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !set.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.finalize(ctx, set)
	}
	if controllerutil.AddFinalizer(set, Finalizer) {
		if err := r.Client.Update(ctx, set); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	works, err := r.ownWorks(ctx, set)
	if err != nil {
		return reconcile.Result{}, err
	}
	v, errs := r.dropUnnamed(ctx, set, works)
	// A missing placement stops the rollout: nothing is created or removed until it exists.
	for i, ref := range set.Spec.PlacementRefs {
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: ref.Name}, &clusterv1beta1.Placement{})
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, utilerrors.NewAggregate(append(errs, r.writeStatus(ctx, set, notFoundStatus(set, ref.Name, i, r.now()))))
		}
		if err != nil {
			return reconcile.Result{}, err
		}
	}
	outcomes, owner := r.decisions(ctx, set, v)
	if err := r.holdBack(ctx, outcomes); err != nil {
		return reconcile.Result{}, utilerrors.NewAggregate(append(errs, err))
	}
	errs = append(errs, r.dropUnselected(ctx, v, outcomes, owner)...)
	requeue, applyErrs := r.rollOut(ctx, set, outcomes, v)
	errs = append(errs, applyErrs...)
	errs = append(errs, r.writeStatus(ctx, set, desiredStatus(set, outcomes, v, r.now())))
	if err := utilerrors.NewAggregate(errs); err != nil {
		return reconcile.Result{}, err
	}
	// A soak time or a progress deadline ends then: the rollout may move on without any event.
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// dropUnnamed deletes the set's ManifestWorks made for placements the set no longer names, as
// OCM does, and returns a view of the others.
func (r *Reconciler) dropUnnamed(ctx context.Context, set *workv1alpha1.ManifestWorkReplicaSet, works map[string]*workv1.ManifestWork) (view, []error) {
	v := view{works: map[string]*workv1.ManifestWork{}, current: map[string]bool{}}
	inSpec := map[string]bool{}
	for _, ref := range set.Spec.PlacementRefs {
		inSpec[ref.Name] = true
	}
	var errs []error
	for c, w := range works {
		if inSpec[w.Labels[PlacementLabel]] {
			v.works[c] = w
		} else if err := r.delete(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	return v, errs
}

// dropUnselected deletes the ManifestWorks of clusters no placement selects any more (not when
// the placement's decisions could not be read: then its clusters are unknown).
func (r *Reconciler) dropUnselected(ctx context.Context, v view, outcomes []refOutcome, owner map[string]string) []error {
	bad := map[string]bool{}
	for _, o := range outcomes {
		bad[o.Name] = o.Err != ""
	}
	var errs []error
	for c, w := range v.works {
		if owner[c] == "" && !bad[w.Labels[PlacementLabel]] {
			if err := r.delete(ctx, w); err != nil {
				errs = append(errs, err)
			}
			delete(v.works, c)
		}
	}
	return errs
}

// rollOut decides each placement's rollout from its clusters' up-to-date works and applies the
// works it lets through, recording each outcome; it returns the earliest time a rollout must be
// looked at again (0: none).
func (r *Reconciler) rollOut(ctx context.Context, set *workv1alpha1.ManifestWorkReplicaSet, outcomes []refOutcome, v view) (time.Duration, []error) {
	var requeue time.Duration
	var errs []error
	for i, ref := range set.Spec.PlacementRefs {
		o := &outcomes[i]
		if o.Err != "" {
			continue
		}
		var states []rollout.ClusterStatus
		for _, c := range o.Clusters {
			if w := v.works[c.Name]; w != nil && upToDate(w, desiredWork(set, c.Name, ref.Name)) {
				v.current[c.Name] = true
				states = append(states, clusterState(w))
			}
		}
		res, err := rollout.Decide(r.Clock, ref.RolloutStrategy, o.Clusters, states)
		if err != nil {
			o.Err = fmt.Sprintf("spec.placementRefs[%d] (%s): %v", i, ref.Name, err)
			continue
		}
		o.Result = res
		if res.RecheckAfter > 0 && (requeue == 0 || res.RecheckAfter < requeue) {
			requeue = res.RecheckAfter
		}
		for _, c := range res.ToRollout {
			if c.Status != rollout.ToApply {
				continue
			}
			w, conflict, err := r.apply(ctx, set, c.Name, ref.Name, v.works[c.Name])
			switch {
			case err != nil:
				errs = append(errs, err)
			case conflict:
				o.Conflicts = append(o.Conflicts, c.Name+"/"+set.Name)
			default:
				v.works[c.Name], v.current[c.Name] = w, true
			}
		}
	}
	return requeue, errs
}

func (r *Reconciler) now() metav1.Time { return metav1.NewTime(r.Clock.Now()) }

// ownWorks are set's ManifestWorks (label, UID and name), by cluster namespace.
func (r *Reconciler) ownWorks(ctx context.Context, set *workv1alpha1.ManifestWorkReplicaSet) (map[string]*workv1.ManifestWork, error) {
	l := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, l, client.MatchingLabels{SetLabel: setKey(set)}); err != nil {
		return nil, err
	}
	out := map[string]*workv1.ManifestWork{}
	for i := range l.Items {
		if w := &l.Items[i]; w.Name == set.Name && owns(set, w) {
			out[w.Namespace] = w
		}
	}
	return out, nil
}

// decisions reads each placement's decided clusters and assigns every cluster to one placementRef:
// the one its ManifestWork was made for while that placement still selects it, else the first
// in spec order that selects it.
func (r *Reconciler) decisions(ctx context.Context, set *workv1alpha1.ManifestWorkReplicaSet, v view) ([]refOutcome, map[string]string) {
	outcomes := make([]refOutcome, len(set.Spec.PlacementRefs))
	decided := make([][]rollout.Cluster, len(set.Spec.PlacementRefs))
	selects := map[string]map[string]bool{}
	for i, ref := range set.Spec.PlacementRefs {
		outcomes[i].Name = ref.Name
		cs, err := rollout.PlacementClusters(ctx, r.Client, set.Namespace, ref.Name)
		if err != nil {
			outcomes[i].Err = fmt.Sprintf("spec.placementRefs[%d] (%s): %v", i, ref.Name, err)
			continue
		}
		decided[i] = cs
		selects[ref.Name] = map[string]bool{}
		for _, c := range cs {
			selects[ref.Name][c.Name] = true
		}
	}
	owner := map[string]string{}
	for c, w := range v.works {
		if p := w.Labels[PlacementLabel]; selects[p][c] {
			owner[c] = p
		}
	}
	for i, ref := range set.Spec.PlacementRefs {
		for _, c := range decided[i] {
			if owner[c.Name] == "" {
				owner[c.Name] = ref.Name
			}
			if owner[c.Name] == ref.Name {
				outcomes[i].Clusters = append(outcomes[i].Clusters, c)
			}
		}
	}
	return outcomes, owner
}

// holdBack moves out of each outcome's clusters those the hub puts no ManifestWork in (package
// delivery: not accepted, being deleted, or their namespace terminating) into its Refused, which
// the status reports. They take no part in the rollout, so that they hold up no other cluster;
// their works, if any, are left to the registration controller, which is emptying their
// namespaces (the set's would come back with every pass of it otherwise).
func (r *Reconciler) holdBack(ctx context.Context, outcomes []refOutcome) error {
	answers := map[string]*delivery.Refusal{}
	for i := range outcomes {
		o := &outcomes[i]
		kept := o.Clusters[:0]
		for _, c := range o.Clusters {
			why, seen := answers[c.Name]
			if !seen {
				var err error
				if why, err = delivery.Check(ctx, r.Client, c.Name); err != nil {
					return err
				}
				answers[c.Name] = why
			}
			if why != nil {
				o.Refused = append(o.Refused, why)
				continue
			}
			kept = append(kept, c)
		}
		o.Clusters = kept
	}
	return nil
}

// apply creates or updates set's ManifestWork in cluster's namespace. existing is the set's own
// (nil if none); a ManifestWork of that name that is not the set's own is a conflict and is left
// alone.
func (r *Reconciler) apply(ctx context.Context, set *workv1alpha1.ManifestWorkReplicaSet, cluster, placement string, existing *workv1.ManifestWork) (*workv1.ManifestWork, bool, error) {
	want := desiredWork(set, cluster, placement)
	if existing != nil {
		if upToDate(existing, want) {
			return existing, false, nil
		}
		w := existing.DeepCopy()
		w.Spec = want.Spec
		for k, v := range want.Labels {
			metav1.SetMetaDataLabel(&w.ObjectMeta, k, v)
		}
		for k, v := range want.Annotations {
			metav1.SetMetaDataAnnotation(&w.ObjectMeta, k, v)
		}
		if len(want.OwnerReferences) > 0 && metav1.GetControllerOf(w) == nil {
			w.OwnerReferences = append(w.OwnerReferences, want.OwnerReferences...)
		}
		if err := r.Client.Update(ctx, w); err != nil {
			return nil, false, fmt.Errorf("updating ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
		}
		return w, false, nil
	}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &workv1.ManifestWork{})
	if err == nil {
		return nil, true, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, false, err
	}
	if err := r.Client.Create(ctx, want); err != nil {
		// AlreadyExists is most likely our own create the cache has not shown yet: retry.
		return nil, false, fmt.Errorf("creating ManifestWork %s/%s: %w", want.Namespace, want.Name, err)
	}
	return want, false, nil
}

// delete deletes one of the set's own ManifestWorks; the UID precondition keeps a ManifestWork
// made meanwhile under the same name.
func (r *Reconciler) delete(ctx context.Context, w *workv1.ManifestWork) error {
	if !w.DeletionTimestamp.IsZero() {
		return nil
	}
	err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

// finalize deletes the set's ManifestWorks and then lets the set go: at once (Background), or
// once they are gone (Foreground; their delete events bring the set back here).
func (r *Reconciler) finalize(ctx context.Context, set *workv1alpha1.ManifestWorkReplicaSet) error {
	if !controllerutil.ContainsFinalizer(set, Finalizer) {
		return nil
	}
	works, err := r.ownWorks(ctx, set)
	if err != nil {
		return err
	}
	var errs []error
	for _, w := range works {
		if err := r.delete(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if set.Spec.CascadeDeletionPolicy == workv1alpha1.Foreground && len(works) > 0 {
		return nil
	}
	controllerutil.RemoveFinalizer(set, Finalizer)
	return client.IgnoreNotFound(r.Client.Update(ctx, set))
}

// writeStatus writes st when it says something new.
func (r *Reconciler) writeStatus(ctx context.Context, set *workv1alpha1.ManifestWorkReplicaSet, st workv1alpha1.ManifestWorkReplicaSetStatus) error {
	old := set.Status
	if conditions.Equal(old.Conditions, st.Conditions) && reflect.DeepEqual(old.Summary, st.Summary) &&
		reflect.DeepEqual(old.PlacementsSummary, st.PlacementsSummary) {
		return nil
	}
	set = set.DeepCopy()
	set.Status = st
	return client.IgnoreNotFound(r.Client.Status().Update(ctx, set))
}
