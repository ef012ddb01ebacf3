package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
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
	// MaxConcurrentReconciles bounds how many placements are scheduled at once (default 16): each
	// spends most of its time waiting on its writes, so many in flight keep the API server busy.
	MaxConcurrentReconciles int

	// index holds every PlacementDecision by placement (set up by SetupWithManager).
	index *decisionIndex
	// own holds the PlacementDecision writes in flight, whose events need no new schedule.
	own *ownWrites
	// fleet is the scheduler's view of the fleet, kept while it does not change.
	fleet fleetSnapshot
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
		workers = 16
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		// The plain work queue: controller-runtime's priority queue puts what the initial list
		// queues behind every later event, and costs more per item at thousands of placements.
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, UsePriorityQueue: ptr.To(false)}).
		// Our own status writes do not change the generation; annotations (the disable switch) do
		// not either, so they are watched too.
		For(&clusterv1beta1.Placement{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		// The index is updated before the placement is queued, so its reconcile sees the change.
		Watches(&clusterv1beta1.PlacementDecision{}, r.index.eventHandler(r.own)).
		Watches(&clusterv1.ManagedCluster{}, r.fleetHandler(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				return r.forClusters(ctx, o.(*clusterv1.ManagedCluster))
			},
			func(ctx context.Context, o, n client.Object) []reconcile.Request {
				if oc, nc := o.(*clusterv1.ManagedCluster), n.(*clusterv1.ManagedCluster); ClusterChanged(oc, nc) {
					return r.forClusterUpdate(ctx, oc, nc)
				}
				return nil
			})).
		Watches(&clusterv1beta2.ManagedClusterSet{}, r.fleetHandler(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.forSets(ctx, []string{o.GetName()}, nil)
		}, nil)).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, r.fleetHandler(r.forNamespace, nil)).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, r.fleetHandler(r.forScore, nil)).
		Watches(&usagev1alpha1.ResourceUsage{}, r.fleetHandler(r.forUsage, nil)).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions/status,verbs=update;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters;managedclustersets;managedclustersetbindings;addonplacementscores,verbs=get;list;watch
// +kubebuilder:rbac:groups=usage.flotilla.io,resources=resourceusages,verbs=get;list;watch
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
	// Brief: the controller writes the decisions and their reasons; the explanation of every
	// cluster is computed when asked for (flotilla explain, the explanation server).
	sched := scheduler.New(r.Clock)
	sched.Brief = true
	res := sched.Schedule(p, snap)
	if !res.Misconfigured {
		changed, err := r.syncDecisions(ctx, p, mine, res.PlacementDecisions)
		if err != nil {
			// Something was deleted meanwhile (the placement, or a decision by garbage collection
			// or by hand): its delete event queues the placement again.
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		// Events are writes too: the first decisions of a placement are told by its status and
		// PlacementDecisions, and an event tells of each later change of the selected clusters.
		if changed != "" && len(mine) > 0 {
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
	fleet, err := r.fleet.get(ctx, r.Client)
	if err != nil {
		return nil, nil, err
	}
	labeled, current, others := r.index.inputs(client.ObjectKeyFromObject(p))
	snap := fleet.ForPlacement(current, scheduler.CurrentClusterDecisions(p.Namespace, p.Name, labeled), others)
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
