package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/scheduler"
)

// Recorder emits events (events.k8s.io); the manager's GetEventRecorder gives one.
type Recorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{})
}

// Event reasons.
const (
	ReasonDecisionsUpdated = "DecisionsUpdated"
	ReasonMisconfigured    = "Misconfigured"
)

// Reconciler schedules each Placement with the scheduling core and writes its PlacementDecisions
// and status.
type Reconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// APIReader reads a placement's PlacementDecisions from the API server before they are
	// rewritten; the manager's is taken when nil.
	APIReader client.Reader
	Clock     clock.PassiveClock
	// Recorder emits events; the manager's is taken when nil.
	Recorder Recorder
	// MaxConcurrentReconciles bounds how many placements are scheduled at once (default 4): each
	// waits on its writes, so a few in flight keep the API server busy.
	MaxConcurrentReconciles int

	// index holds every PlacementDecision by placement (set up by SetupWithManager).
	index *decisionIndex
	// own holds the PlacementDecision writes in flight, whose events need no new schedule.
	own *ownWrites
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// ControllerName names the controller and the events' reporting controller.
const ControllerName = "flotilla-placement"

// SetupWithManager registers the reconciler and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	r.index = newDecisionIndex()
	r.own = newOwnWrites()
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		// Our own status writes do not change the generation; annotations (the disable switch) do
		// not either, so they are watched too.
		For(&clusterv1beta1.Placement{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		// The index is updated before the placement is queued, so its reconcile sees the change.
		Watches(&clusterv1beta1.PlacementDecision{}, r.index.eventHandler(r.own)).
		Watches(&clusterv1.ManagedCluster{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, e eventCreate, q queue) {
				r.enqueue(ctx, q, r.forClusters(ctx, e.Object.(*clusterv1.ManagedCluster)))
			},
			UpdateFunc: func(ctx context.Context, e eventUpdate, q queue) {
				o, n := e.ObjectOld.(*clusterv1.ManagedCluster), e.ObjectNew.(*clusterv1.ManagedCluster)
				if ClusterChanged(o, n) {
					r.enqueue(ctx, q, r.forClusterUpdate(ctx, o, n))
				}
			},
			DeleteFunc: func(ctx context.Context, e eventDelete, q queue) {
				if mc, ok := e.Object.(*clusterv1.ManagedCluster); ok {
					r.enqueue(ctx, q, r.forClusters(ctx, mc))
				}
			},
		}).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.forSets(ctx, []string{o.GetName()}, nil)
		})).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(r.forNamespace)).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, handler.EnqueueRequestsFromMapFunc(r.forScore)).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters;managedclustersets;managedclustersetbindings;addonplacementscores,verbs=get;list;watch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile schedules one placement and writes what the scheduler decided.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// A placement being deleted takes its decisions with it (garbage collection of owned objects).
	if !p.DeletionTimestamp.IsZero() || p.Annotations[clusterv1beta1.PlacementDisableAnnotation] == "true" {
		return reconcile.Result{}, nil
	}
	snap, mine, err := r.snapshot(ctx, p)
	if err != nil {
		return reconcile.Result{}, err
	}
	res := scheduler.New(r.Clock).Schedule(p, snap)
	if !res.Misconfigured {
		changed, err := r.syncDecisions(ctx, p, mine, res.PlacementDecisions)
		if err != nil {
			// Something was deleted meanwhile (the placement, or a decision by garbage collection
			// or by hand): its delete event queues the placement again.
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if changed != "" {
			r.Recorder.Eventf(p, nil, "Normal", ReasonDecisionsUpdated, "Schedule", "%d clusters selected: %s", len(res.Decisions), changed)
		}
	}
	if err := r.updateStatus(ctx, p, res); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{RequeueAfter: res.RequeueAfter}, nil
}

// snapshot reads the scheduler's inputs from the cache and the decision index, and returns
// this placement's PlacementDecisions (those it controls; read-only).
func (r *Reconciler) snapshot(ctx context.Context, p *clusterv1beta1.Placement) (*scheduler.Snapshot, []clusterv1beta1.PlacementDecision, error) {
	// The scheduler only reads: no deep copies of the whole fleet.
	noCopy := client.UnsafeDisableDeepCopy
	clusters := &clusterv1.ManagedClusterList{}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	scores := &clusterv1alpha1.AddOnPlacementScoreList{}
	for _, l := range []client.ObjectList{clusters, sets, bindings, scores} {
		if err := r.Client.List(ctx, l, noCopy); err != nil {
			return nil, nil, err
		}
	}
	snap := &scheduler.Snapshot{Clusters: clusters.Items, Sets: sets.Items, Bindings: bindings.Items, Scores: scores.Items}
	var labeled []clusterv1beta1.PlacementDecision
	labeled, snap.CurrentDecisions, snap.OtherDecisionCounts = r.index.inputs(client.ObjectKeyFromObject(p))
	snap.CurrentScores = scheduler.CurrentClusterDecisions(p.Namespace, p.Name, labeled)
	return snap, owned(p, labeled), nil
}

// owned returns the PlacementDecisions of p's namespace that p controls, sorted by name.
func owned(p *clusterv1beta1.Placement, decisions []clusterv1beta1.PlacementDecision) []clusterv1beta1.PlacementDecision {
	var out []clusterv1beta1.PlacementDecision
	for i := range decisions {
		d := &decisions[i]
		if d.Namespace != p.Namespace {
			continue
		}
		if ref := metav1.GetControllerOf(d); ref != nil && ref.UID == p.UID {
			out = append(out, *d)
		}
	}
	slices.SortFunc(out, func(a, b clusterv1beta1.PlacementDecision) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// membershipChange says briefly how the selected clusters changed, "" when they did not.
func membershipChange(before, after []scheduler.PlacementDecisionSlice) string {
	in := func(ss []scheduler.PlacementDecisionSlice) map[string]bool {
		m := map[string]bool{}
		for _, s := range ss {
			for _, d := range s.Decisions {
				m[d.ClusterName] = true
			}
		}
		return m
	}
	b, a := in(before), in(after)
	var added, removed []string
	for c := range a {
		if !b[c] {
			added = append(added, c)
		}
	}
	for c := range b {
		if !a[c] {
			removed = append(removed, c)
		}
	}
	if len(added)+len(removed) == 0 {
		return ""
	}
	slices.Sort(added)
	slices.Sort(removed)
	return fmt.Sprintf("%d added%s, %d removed%s", len(added), sample(added), len(removed), sample(removed))
}

// sample names up to three clusters, for an event's note.
func sample(names []string) string {
	switch {
	case len(names) == 0:
		return ""
	case len(names) <= 3:
		return " (" + strings.Join(names, ", ") + ")"
	default:
		return " (" + strings.Join(names[:3], ", ") + ", ...)"
	}
}
