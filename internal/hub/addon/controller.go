package addon

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/retry"
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

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/conditions"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// Reconciler installs each ClusterManagementAddOn on the clusters of its install placements and
// rolls its configurations out to its ManagedClusterAddOns.
type Reconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// Reader reads configuration objects from the API server (their spec is hashed as the API
	// server returns it), and a ManagedClusterAddOn whose status write conflicted; Mapper finds
	// the configurations' kinds. Default: the manager's.
	Reader client.Reader
	// Cache reads the configurations of the kinds the hub serves and watches (cachedConfigs) from
	// the manager's cache, as unstructured objects, from the informer whose events bring a changed
	// configuration here: an add-on on 1,000 clusters with a configuration each is 1,000 reads
	// that were, one after another, the first half of its first pass (about 30 s on a loaded
	// 2-core hub). Default: the manager's cache; nil in a test: Reader.
	Cache  client.Reader
	Mapper meta.RESTMapper
	Clock  clock.PassiveClock
	// MaxConcurrentReconciles bounds how many add-ons are reconciled at once (default 4).
	MaxConcurrentReconciles int
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Finalizer keeps a ClusterManagementAddOn until the hub has deleted the ManagedClusterAddOns
// it created for it.
const Finalizer = "addon.flotilla.io/managedclusteraddon-cleanup"

const (
	// nameIndex indexes ManagedClusterAddOns by name (their add-on's name).
	nameIndex = "metadata.name"
	// placementIndex indexes ClusterManagementAddOns by their install placements' namespace/name.
	placementIndex = "spec.installStrategy.placements"
)

// SetupWithManager registers the reconciler, its indexes and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	if r.Cache == nil {
		r.Cache = mgr.GetCache()
	}
	if r.Mapper == nil {
		r.Mapper = mgr.GetRESTMapper()
	}
	if err := indexAddonsByName(mgr); err != nil {
		return err
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &addonv1alpha1.ClusterManagementAddOn{}, placementIndex,
		func(o client.Object) []string {
			var keys []string
			for _, p := range o.(*addonv1alpha1.ClusterManagementAddOn).Spec.InstallStrategy.Placements {
				keys = append(keys, p.Namespace+"/"+p.Name)
			}
			return keys
		})
	if err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	forPlacement := func(ctx context.Context, ns, name string) []reconcile.Request {
		l := &addonv1alpha1.ClusterManagementAddOnList{}
		if err := r.Client.List(ctx, l, client.MatchingFields{placementIndex: ns + "/" + name}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the ClusterManagementAddOns of a placement", "namespace", ns, "placement", name)
			return nil
		}
		return requests(l)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		// Our status writes do not change the generation.
		For(&addonv1alpha1.ClusterManagementAddOn{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
			predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() }}))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
		})).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return forPlacement(ctx, o.GetNamespace(), o.GetName())
		})).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			p, ok := o.GetLabels()[clusterv1beta1.PlacementLabel]
			if !ok {
				return nil
			}
			return forPlacement(ctx, o.GetNamespace(), p)
		})).
		// A configuration's new spec is a new version to roll out. Only the configuration kinds
		// Flotilla serves are watched, as unstructured objects: the informer whose event brings
		// the change is the one readHash reads them from. Others are read again at every reconcile.
		Watches(cachedConfig(addonv1alpha1.GroupVersion.WithKind("AddOnDeploymentConfig")), handler.EnqueueRequestsFromMapFunc(r.allAddOns)).
		Watches(cachedConfig(addonv1alpha1.GroupVersion.WithKind("AddOnTemplate")), handler.EnqueueRequestsFromMapFunc(r.allAddOns)).
		// A selected cluster accepted again, or its namespace made anew, gets its add-on.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.allAddOns), builder.WithPredicates(delivery.Changed)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allAddOns), builder.WithPredicates(delivery.Changed)).
		Complete(r)
}

// indexAddonsByName adds the name index of ManagedClusterAddOns once per manager.
func indexAddonsByName(mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(context.Background(), &addonv1alpha1.ManagedClusterAddOn{}, nameIndex,
		func(o client.Object) []string { return []string{o.GetName()} })
}

func (r *Reconciler) allAddOns(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &addonv1alpha1.ClusterManagementAddOnList{}
	if err := r.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ClusterManagementAddOns")
		return nil
	}
	return requests(l)
}

func requests(l *addonv1alpha1.ClusterManagementAddOnList) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, c := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return out
}

// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons/status,verbs=update;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons/finalizers,verbs=update
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=update;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=addondeploymentconfigs;addontemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements;placementdecisions;managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Reconcile installs one add-on where its placements say, and rolls its configurations out.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, cma); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	l := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, l, client.MatchingFields{nameIndex: cma.Name}); err != nil {
		return reconcile.Result{}, err
	}
	mcas := make([]*addonv1alpha1.ManagedClusterAddOn, 0, len(l.Items))
	for i := range l.Items {
		mcas = append(mcas, &l.Items[i])
	}
	if !cma.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.finalize(ctx, cma, mcas)
	}
	if controllerutil.AddFinalizer(cma, Finalizer) {
		if err := r.Client.Update(ctx, cma); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	views, err := readPlacements(ctx, r.Client, cma)
	if err != nil {
		return reconcile.Result{}, err
	}

	// Install: every cluster a placement selects gets a ManagedClusterAddOn.
	var errs []error
	served := servedClusters(views)
	if cma.Spec.InstallStrategy.Type == addonv1alpha1.InstallStrategyPlacements {
		plan := planInstall(cma, served.required(), readAll(views), mcas)
		created, ierrs := r.install(ctx, cma, plan)
		errs = append(errs, ierrs...)
		mcas = append(mcas, created...)
		mcas = slices.DeleteFunc(mcas, func(m *addonv1alpha1.ManagedClusterAddOn) bool { return slices.Contains(plan.Remove, m) })
	}

	// Configurations: resolve and hash them, and decide per placement which add-ons get them now.
	h := r.readHashes(ctx, wantedConfigs(cma, len(views), mcas))
	d := decide(r.Clock, cma, views, served, mcas, h)
	now := metav1.NewTime(r.Clock.Now())
	errs = append(errs, r.writeAddonStatuses(ctx, cma, d.Addons, now)...)
	errs = append(errs, r.writeStatus(ctx, cma, h, d.Inputs, now))
	if err := utilerrors.NewAggregate(errs); err != nil {
		return reconcile.Result{}, err
	}
	// A soak time or a progress deadline ends then: the rollout may move on without any event.
	return reconcile.Result{RequeueAfter: d.RecheckAfter}, nil
}

// finalize deletes the hub's own ManagedClusterAddOns of a deleted ClusterManagementAddOn and
// then lets it go. Their controller reference would have the garbage collector delete them too,
// but the hub does not depend on it: a garbage collector that cannot list a kind (for example
// while a conversion webhook is down) never gets to them.
func (r *Reconciler) finalize(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn, mcas []*addonv1alpha1.ManagedClusterAddOn) error {
	if !controllerutil.ContainsFinalizer(cma, Finalizer) {
		return nil
	}
	var errs []error
	for _, m := range mcas {
		if !owned(cma, m) || !m.DeletionTimestamp.IsZero() {
			continue
		}
		err := r.Client.Delete(ctx, m, client.Preconditions{UID: &m.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting ManagedClusterAddOn %s/%s: %w", m.Namespace, m.Name, err))
		}
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	controllerutil.RemoveFinalizer(cma, Finalizer)
	return client.IgnoreNotFound(r.Client.Update(ctx, cma))
}

// statusWriters is how many ManagedClusterAddOn statuses one reconcile writes at once: an add-on
// on 1,000 clusters writes 1,000 of them at every step of its rollout.
const statusWriters = 16

// writeAddonStatuses writes the statuses of views that changed, statusWriters at a time, and
// returns the errors.
func (r *Reconciler) writeAddonStatuses(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn, views []*addonView, now metav1.Time) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	next := make(chan *addonView)
	for range min(statusWriters, len(views)) {
		wg.Go(func() {
			for v := range next {
				if err := r.writeAddonStatus(ctx, cma, v, now); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, v := range views {
		next <- v
	}
	close(next)
	wg.Wait()
	return errs
}

// writeAddonStatus writes the hub's part of one ManagedClusterAddOn's status when it changed,
// with the Progressing condition that follows from it (Progress).
//
// The template and progressing controllers write their parts of the same status meanwhile (an
// add-on on 1,000 clusters: thousands of writes at once), so a write from the cache's copy may
// conflict. The hub's part is then put on the ManagedClusterAddOn as the API server has it now,
// rather than failing the whole pass: a failed pass redoes every cluster's add-on after a
// back-off that grows with each failure.
func (r *Reconciler) writeAddonStatus(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn, v *addonView, now metav1.Time) error {
	return RetryStatusOnConflict(ctx, r.Reader, v.MCA, func(mca *addonv1alpha1.ManagedClusterAddOn) error {
		view := *v
		view.MCA = mca
		st, err := Progress(ctx, r.Client, cma, mca, desiredAddonStatus(cma, &view, now), now)
		if err != nil {
			return err
		}
		if !addonStatusChanged(mca.Status, st) && !ProgressChanged(mca.Status, st) {
			return nil
		}
		m := mca.DeepCopy()
		m.Status = st
		return client.IgnoreNotFound(r.Client.Status().Update(ctx, m))
	})
}

// RetryStatusOnConflict calls write with mca, an add-on as a cache had it, and while the write
// conflicts (another controller wrote the add-on since), with the add-on as the API server has it
// now (read through r), so that the writer puts its own part of the status on what is there
// rather than failing into its queue's back-off. It stops without writing when the add-on's spec
// changed or it is being deleted meanwhile: the reconcile that event brings decides anew. Every
// controller that writes part of a ManagedClusterAddOn's status (the lifecycle and template
// controllers) writes through it.
func RetryStatusOnConflict(ctx context.Context, r client.Reader, mca *addonv1alpha1.ManagedClusterAddOn, write func(*addonv1alpha1.ManagedClusterAddOn) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := write(mca)
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh := &addonv1alpha1.ManagedClusterAddOn{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(mca), fresh); err != nil {
			return client.IgnoreNotFound(err)
		}
		if fresh.Generation != mca.Generation || !fresh.DeletionTimestamp.IsZero() {
			return nil
		}
		mca = fresh
		return err
	})
}

// writeStatus writes the ClusterManagementAddOn's status when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn, h hashes, inputs []progressionInput, now metav1.Time) error {
	st := addonv1alpha1.ClusterManagementAddOnStatus{DefaultConfigReferences: defaultReferences(cma, h)}
	for _, in := range inputs {
		var old *addonv1alpha1.InstallProgression
		for i := range cma.Status.InstallProgressions {
			if cma.Status.InstallProgressions[i].PlacementRef == in.View.PlacementRef {
				old = &cma.Status.InstallProgressions[i]
			}
		}
		st.InstallProgressions = append(st.InstallProgressions, desiredProgression(cma, old, in, now))
	}
	if progressionsEqual(cma.Status, st) {
		return nil
	}
	c := cma.DeepCopy()
	c.Status = st
	return client.IgnoreNotFound(r.Client.Status().Update(ctx, c))
}

// progressionsEqual compares two statuses, conditions without their transition times.
func progressionsEqual(a, b addonv1alpha1.ClusterManagementAddOnStatus) bool {
	if !equality.Semantic.DeepEqual(a.DefaultConfigReferences, b.DefaultConfigReferences) || len(a.InstallProgressions) != len(b.InstallProgressions) {
		return false
	}
	for i := range a.InstallProgressions {
		x, y := a.InstallProgressions[i], b.InstallProgressions[i]
		if x.PlacementRef != y.PlacementRef || !equality.Semantic.DeepEqual(x.ConfigReferences, y.ConfigReferences) || !conditions.Equal(x.Conditions, y.Conditions) {
			return false
		}
	}
	return true
}
