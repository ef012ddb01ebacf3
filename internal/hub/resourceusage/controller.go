package resourceusage

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// Name is the add-on whose scores this controller writes.
var Name = builtinaddon.ResourceUsage.Name

// Reconciler writes each cluster's AddOnPlacementScore resource-usage-score from its
// ResourceUsage. Requests are cluster namespaces.
type Reconciler struct {
	Client client.Client
	// MaxAcceleratorsPerNode caps the GPUs and TPUs one node may report
	// (DefaultMaxAcceleratorsPerNode when zero); a report above it is implausible.
	MaxAcceleratorsPerNode int64
	// Recorder emits events; the manager's is taken when nil.
	Recorder Recorder

	flagMu sync.Mutex
	// flagged is the problem last reported for each namespace's implausible ResourceUsage, so
	// that an event is emitted when it changes, not at every reconcile.
	flagged map[string]string
	// Clock stamps the ScoreConflict condition; the real clock when nil.
	Clock clock.PassiveClock

	mu sync.Mutex
	// shares holds each cluster's share of the maxima (its own maxima), by namespace; nil until
	// the first reconcile fills it from the cache.
	shares map[string]Maxima
	maxima Maxima
	// all gets every cluster again when the fleet's maxima move.
	all chan event.GenericEvent
}

// +kubebuilder:rbac:groups=usage.flotilla.io,resources=resourceusages,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=addonplacementscores,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=addonplacementscores/status,verbs=update
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=patch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.all = make(chan event.GenericEvent, 1024)
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("resourceusage-score")
	}
	// Acceptance decides whether a namespace's figures count.
	ofCluster := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetName(), Name: usagev1alpha1.ResourceUsageName}}}
	})
	inNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: usagev1alpha1.ResourceUsageName}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("resourceusage-score").
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		For(&usagev1alpha1.ResourceUsage{}, builder.WithPredicates(named(usagev1alpha1.ResourceUsageName))).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, inNamespace, builder.WithPredicates(named(clusterv1alpha1.ResourceUsageScoreName))).
		Watches(&clusterv1.ManagedCluster{}, ofCluster).
		// This add-on and OCM's resource-usage-collect, which writes the same score.
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, inNamespace, builder.WithPredicates(named(Name, builtinaddon.ResourceUsageCollect))).
		WatchesRawSource(source.Channel(r.all, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

func named(names ...string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return slices.Contains(names, o.GetName()) })
}

// Reconcile writes, or deletes, one cluster's score.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := client.ObjectKey{Namespace: req.Namespace, Name: usagev1alpha1.ResourceUsageName}
	var usage *usagev1alpha1.ResourceUsage
	u := &usagev1alpha1.ResourceUsage{}
	if err := r.Client.Get(ctx, key, u); err == nil && u.DeletionTimestamp == nil {
		// Figures that do not count are as none: left out of the maxima, and no score.
		if usage, err = r.admitted(ctx, u); err != nil {
			return ctrl.Result{}, err
		}
	} else if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	m, err := r.updateMaxima(ctx, key.Namespace, usage)
	if err != nil {
		return ctrl.Result{}, err
	}
	score := &clusterv1alpha1.AddOnPlacementScore{}
	scoreKey := client.ObjectKey{Namespace: req.Namespace, Name: clusterv1alpha1.ResourceUsageScoreName}
	err = r.Client.Get(ctx, scoreKey, score)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil
	var existing *clusterv1alpha1.AddOnPlacementScore
	if exists {
		existing = score
	}
	yield, err := r.reportConflict(ctx, req.Namespace, existing)
	if err != nil {
		return ctrl.Result{}, err
	}
	if exists && (score.Labels[builtinaddon.Label] != Name || len(otherWriters(score)) > 0) {
		log.FromContext(ctx).Info("AddOnPlacementScore exists and is not the hub's alone (made or written by another writer): left alone",
			"score", scoreKey, "label", builtinaddon.Label+"="+Name, "otherWriters", otherWriters(score))
		return ctrl.Result{}, nil
	}
	if usage == nil {
		if exists {
			uid := score.UID
			return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, score, client.Preconditions{UID: &uid}))
		}
		return ctrl.Result{}, nil
	}
	if yield {
		// OCM's resource-usage-collect is enabled here: it writes the score, the hub does not.
		return ctrl.Result{}, nil
	}
	want := clusterv1alpha1.AddOnPlacementScoreStatus{Scores: Scores(&usage.Status, m), ValidUntil: usage.Status.ValidUntil.DeepCopy()}
	if !exists {
		score = &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{
			Namespace: scoreKey.Namespace, Name: scoreKey.Name, Labels: map[string]string{builtinaddon.Label: Name},
		}}
		if err := r.Client.Create(ctx, score, client.FieldOwner(FieldManager)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if equality.Semantic.DeepEqual(score.Status.Scores, want.Scores) && equality.Semantic.DeepEqual(score.Status.ValidUntil, want.ValidUntil) {
		return ctrl.Result{}, nil
	}
	score.Status.Scores, score.Status.ValidUntil = want.Scores, want.ValidUntil
	// With the resourceVersion read: a write by another writer since makes this one fail, and the
	// next reconcile sees that writer.
	return ctrl.Result{}, r.Client.Status().Update(ctx, score, client.FieldOwner(FieldManager))
}

// updateMaxima records one cluster's figures (nil when it has none) and returns the fleet's
// maxima; when they moved, it queues every cluster again. Each cluster's share of the maxima is
// kept here, so a change costs a pass over a small table, not over the fleet's figures; the
// table is filled from the cache at the first call.
func (r *Reconciler) updateMaxima(ctx context.Context, cluster string, usage *usagev1alpha1.ResourceUsage) (Maxima, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shares == nil {
		list := &usagev1alpha1.ResourceUsageList{}
		if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return Maxima{}, err
		}
		r.shares = make(map[string]Maxima, len(list.Items))
		for i := range list.Items {
			u := &list.Items[i]
			if u.Name != usagev1alpha1.ResourceUsageName || u.DeletionTimestamp != nil {
				continue
			}
			if ok, err := r.admitted(ctx, u); err != nil {
				r.shares = nil
				return Maxima{}, err
			} else if ok != nil {
				r.shares[u.Namespace] = FleetMaxima(list.Items[i : i+1])
			}
		}
	}
	if usage == nil {
		delete(r.shares, cluster)
	} else {
		r.shares[cluster] = FleetMaxima([]usagev1alpha1.ResourceUsage{*usage})
	}
	var m Maxima
	for _, share := range r.shares {
		m = m.max(share)
	}
	if m != r.maxima {
		r.maxima = m
		for ns := range r.shares {
			r.all <- event.GenericEvent{Object: &usagev1alpha1.ResourceUsage{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: usagev1alpha1.ResourceUsageName}}}
		}
	}
	return m, nil
}
