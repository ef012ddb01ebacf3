package federatedlearning

import (
	"context"
	"errors"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
)

// DefaultProgressInterval is how often the controller reads a running server's log.
const DefaultProgressInterval = 5 * time.Second

// Reconciler runs FederatedLearnings (see the package documentation).
type Reconciler struct {
	// Client reads from the manager's cache (which holds only the Deployments, Jobs, Services
	// and claims that carry NameLabel) and writes.
	Client client.Client
	// Reader reads what the cache does not hold: the hub's Nodes and the SuperLink's CA.
	Reader client.Reader
	// SuperLinks configures the SuperLinks the hub runs for Flower federations of their own.
	SuperLinks SuperLinks
	// Flower reads Flower federations' runs from their SuperLink; nil reads no progress.
	Flower *FlowerRuns
	Clock  clock.PassiveClock
	// ProgressInterval is how often a running server's log is read (DefaultProgressInterval
	// when zero).
	ProgressInterval time.Duration
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the reconciler and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	byLabels := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		l := o.GetLabels()
		name, ns := l[NameLabel], l[NamespaceLabel]
		if name == "" || ns == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("federatedlearning").
		For(&flv1alpha1.FederatedLearning{}).
		Owns(&clusterv1beta1.Placement{}).
		Owns(&appsv1.Deployment{}).
		Owns(&batchv1.Job{}).
		Owns(&corev1.Service{}).
		Owns(&workv1alpha1.ManifestWorkReplicaSet{}).
		Watches(&workv1.ManifestWork{}, byLabels).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			p := o.GetLabels()[clusterv1beta1.PlacementLabel]
			if p == "" {
				return nil
			}
			// A FederatedLearning's placement has its name; enqueuing a name that has none is a no-op.
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: p}}}
		})).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		Complete(r)
}

// all maps an event to every FederatedLearning: clusters' claims and add-ons change seldom.
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &flv1alpha1.FederatedLearningList{}
	if err := r.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing FederatedLearnings")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])})
	}
	return reqs
}

// +kubebuilder:rbac:groups=federation-ai.open-cluster-management.io,resources=federatedlearnings,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=federation-ai.open-cluster-management.io,resources=federatedlearnings/status,verbs=update;patch
// +kubebuilder:rbac:groups=federation-ai.open-cluster-management.io,resources=federatedlearnings/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets/bind,verbs=create
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions;managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets;manifestworks,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=services;persistentvolumeclaims;configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list

// Reconcile brings one FederatedLearning forward, or cleans up after it.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	fl := &flv1alpha1.FederatedLearning{}
	if err := r.Client.Get(ctx, req.NamespacedName, fl); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !fl.DeletionTimestamp.IsZero() {
		if r.Flower != nil {
			r.Flower.Forget(fl.UID)
		}
		return reconcile.Result{}, r.finalize(ctx, fl)
	}
	if controllerutil.AddFinalizer(fl, Finalizer) {
		if err := r.Client.Update(ctx, fl); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	if terminal(fl) {
		return reconcile.Result{}, nil
	}
	o := observed{Now: metav1.NewTime(r.Clock.Now()), Clients: map[string]clientState{}}
	if o.SpecErrors = validate(fl, r.Flower != nil && r.Flower.AllowLocal); len(o.SpecErrors) > 0 {
		return reconcile.Result{}, r.writeStatus(ctx, fl, o)
	}
	err := r.observe(ctx, fl, &o)
	if werr := r.writeStatus(ctx, fl, o); werr != nil {
		return reconcile.Result{}, errors.Join(err, werr)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	// Only a Flower federation waits on what no watch brings: its run on the SuperLink, and the
	// SuperLink's CA in flower-system (not cached). OpenFL's objects are all watched.
	phase := fl.Status.Phase
	if (phase == flv1alpha1.PhaseRunning || phase == flv1alpha1.PhaseWaiting) && framework(&fl.Spec) == flv1alpha1.FrameworkFlower {
		return reconcile.Result{RequeueAfter: r.interval()}, nil
	}
	return reconcile.Result{}, nil
}

func (r *Reconciler) interval() time.Duration {
	if r.ProgressInterval > 0 {
		return r.ProgressInterval
	}
	return DefaultProgressInterval
}

// observe makes what fl needs and records what it finds. Conflicts are recorded, not returned:
// they wait for a person, not for a retry.
func (r *Reconciler) observe(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed) error {
	conflict := func(err error) error {
		var c errConflict
		if errors.As(err, &c) {
			o.Conflicts = append(o.Conflicts, c.Error())
			return nil
		}
		return err
	}
	if err := conflict(r.ensure(ctx, fl, "Placement", desiredPlacement(fl), &clusterv1beta1.Placement{}, true)); err != nil {
		return err
	}
	for _, b := range desiredBindings(fl) {
		// A binding someone else made serves as well: it binds the same set.
		if err := r.ensure(ctx, fl, "ManagedClusterSetBinding", b, &clusterv1beta2.ManagedClusterSetBinding{}, true); err != nil && !isConflict(err) {
			return err
		}
	}
	if len(o.Conflicts) > 0 {
		return nil
	}
	decided, err := r.decided(ctx, fl)
	if err != nil {
		return err
	}
	o.Decided = decided
	if err := r.checkClaims(ctx, fl, o); err != nil {
		return err
	}
	if framework(&fl.Spec) == flv1alpha1.FrameworkFlower {
		return r.flower(ctx, fl, o, conflict)
	}
	return r.openFL(ctx, fl, o, conflict)
}

func isConflict(err error) bool {
	var c errConflict
	return errors.As(err, &c)
}

// decided lists the clusters of fl's placement's decisions, sorted.
func (r *Reconciler) decided(ctx context.Context, fl *flv1alpha1.FederatedLearning) ([]string, error) {
	l := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, l, client.InNamespace(fl.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: fl.Name}); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range l.Items {
		for _, c := range d.Status.Decisions {
			if c.ClusterName != "" && !seen[c.ClusterName] {
				seen[c.ClusterName] = true
				out = append(out, c.ClusterName)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkClaims excludes decided clusters that do not report the data claim, and records each
// cluster's data path. The claim is read from the cluster's status, which only its own agent
// may change (the hub's webhook).
func (r *Reconciler) checkClaims(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed) error {
	claim := dataClaim(&fl.Spec)
	for _, name := range o.Decided {
		mc := &clusterv1.ManagedCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc); client.IgnoreNotFound(err) != nil {
			return err
		}
		cs := clientState{}
		if claim != "" {
			if cs.DataPath = claimValue(mc, claim); cs.DataPath == "" {
				cs.Excluded, cs.Reason = true, ReasonMissingClaim
				cs.Message = "cluster " + name + " does not report the claim " + claim + " (spec.client.placement's last Exists claim selector), so it gets no client: create the ClusterClaim " + claim + " on that cluster, naming its data path"
			}
		}
		o.Clients[name] = cs
	}
	return nil
}

func claimValue(mc *clusterv1.ManagedCluster, claim string) string {
	for _, c := range mc.Status.ClusterClaims {
		if c.Name == claim {
			return c.Value
		}
	}
	return ""
}

// dataPaths are the data paths of the decided clusters that may get a client ("" without a
// data claim), as checkClaims read them.
func dataPaths(o *observed) map[string]string {
	out := map[string]string{}
	for _, name := range o.Decided {
		if c := o.Clients[name]; !c.Excluded {
			out[name] = c.DataPath
		}
	}
	return out
}

// writeStatus writes the status computed from o when it differs from the stored one.
func (r *Reconciler) writeStatus(ctx context.Context, fl *flv1alpha1.FederatedLearning, o observed) error {
	st := computeStatus(fl, o)
	if equality.Semantic.DeepEqual(st, fl.Status) {
		return nil
	}
	fl.Status = st
	return client.IgnoreNotFound(r.Client.Status().Update(ctx, fl))
}

// finalize removes fl's ManifestWorks in cluster namespaces (everything in its own namespace
// goes with it by owner references), then lets it go.
func (r *Reconciler) finalize(ctx context.Context, fl *flv1alpha1.FederatedLearning) error {
	if !controllerutil.ContainsFinalizer(fl, Finalizer) {
		return nil
	}
	if err := r.deleteWorks(ctx, fl); err != nil {
		return err
	}
	if err := r.deleteRecord(ctx, fl); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(fl, Finalizer)
	return client.IgnoreNotFound(r.Client.Update(ctx, fl))
}

// deleteWorks deletes every ManifestWork of fl's, found by its UID label (when fl goes).
func (r *Reconciler) deleteWorks(ctx context.Context, fl *flv1alpha1.FederatedLearning) error {
	l := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, l, client.MatchingLabels{UIDLabel: string(fl.UID)}); err != nil {
		return err
	}
	var errs []error
	for i := range l.Items {
		errs = append(errs, r.deleteMine(ctx, fl, &l.Items[i]))
	}
	return errors.Join(errs...)
}

// deleteStaleWorks deletes fl's ManifestWork name in the namespace of every cluster that may
// hold one (those of fl's status and those decided now) and that keep does not name. It reads
// each by name, so a reconcile costs one cached read per client, not a list of every work.
func (r *Reconciler) deleteStaleWorks(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed, name string, keep map[string]string) error {
	candidates := map[string]bool{}
	for _, c := range fl.Status.Clients {
		candidates[c.Cluster] = true
	}
	for _, c := range o.Decided {
		candidates[c] = true
	}
	var errs []error
	for c := range candidates {
		if _, ok := keep[c]; ok {
			continue
		}
		w := &workv1.ManifestWork{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: name}, w); err != nil {
			errs = append(errs, client.IgnoreNotFound(err))
			continue
		}
		errs = append(errs, r.deleteMine(ctx, fl, w))
	}
	return errors.Join(errs...)
}

// deleteMine deletes w if fl made it (its UID label), and leaves anyone else's alone.
func (r *Reconciler) deleteMine(ctx context.Context, fl *flv1alpha1.FederatedLearning, w *workv1.ManifestWork) error {
	if !mine(fl, w) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, w))
}
