package kueue

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// RequeueReconciler puts back in the hub's queue the workloads admitted on a worker that the hub declared
// lost under its fencing Timing (internal/contract/fencing): by then the worker's agent has stopped them
// (MultiKueue's Jobs are fenced), so they may start elsewhere. It sets their MultiKueue check to
// Retry, which is what Kueue itself does after multiKueue.workerLostTimeout; Kueue then evicts
// the workload, releases its quota and queues it again, and the dispatcher offers it to the next
// worker.
//
// Kueue's timeout cannot do this safely: it counts from the workload's admission, not from the
// loss, so a job older than the timeout is requeued the moment the hub's Kueue loses its
// connection to the worker, before the worker's agent can know it is cut off. Keep
// workerLostTimeout long (Kueue's 15 minutes) on fleets whose workers are fenced, and let the
// hub requeue at the declared loss (docs/failover.md).
type RequeueReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

var _ reconcile.Reconciler = (*RequeueReconciler)(nil)

// ConfigWait bounds how long after the declared loss the RequeueReconciler waits for the lost worker to
// leave the hub's MultiKueueConfigs before it requeues its workloads anyway.
const ConfigWait = 10 * time.Second

// RequeueRetry is how often the RequeueReconciler looks again at a lost worker that still holds workloads.
const RequeueRetry = 2 * time.Second

// SetupWithManager registers the requeuer.
func (r *RequeueReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("kueue-lost-worker").
		For(&clusterv1.ManagedCluster{}).
		Complete(r)
}

// DeclaredLost says whether the hub declared the cluster lost under a fencing Timing, and when:
// Available is Unknown since the time the lease controller recorded with the raised epoch.
func DeclaredLost(mc *clusterv1.ManagedCluster) (time.Time, bool) {
	if _, ok, _ := fencing.OfCluster(mc.Annotations); !ok {
		return time.Time{}, false
	}
	at, ok := fencing.LostAt(mc.Annotations)
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if !ok || c == nil || c.Status != metav1.ConditionUnknown || at.Before(c.LastTransitionTime.Add(-time.Second)) {
		return time.Time{}, false
	}
	return at, true
}

// LostChanged passes the updates of a ManagedCluster that change whether it is DeclaredLost.
var LostChanged predicate.Predicate = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return lost(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return lost(e.ObjectOld) != lost(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func lost(o client.Object) bool {
	mc, ok := o.(*clusterv1.ManagedCluster)
	if !ok {
		return false
	}
	_, l := DeclaredLost(mc)
	return l
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;patch

// Reconcile requeues the workloads admitted on the cluster while it is declared lost.
func (r *RequeueReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	lostAt, lost := DeclaredLost(mc)
	if !lost {
		return reconcile.Result{}, nil
	}
	// Requeue once the worker is out of the hub's MultiKueueConfigs (Reconciler.withoutLost), so
	// that Kueue, evicting the workloads, does not reach for the cut worker; not longer than
	// ConfigWait, so that a config the hub cannot write does not hold the workloads forever.
	if in, err := r.inConfig(ctx, mc.Name); err != nil {
		return reconcile.Result{}, err
	} else if in != "" && r.Clock.Since(lostAt) < ConfigWait {
		ctrl.LoggerFrom(ctx).V(1).Info("waiting for the lost worker to leave MultiKueue", "cluster", mc.Name, "config", in)
		return reconcile.Result{RequeueAfter: ConfigWait / 20}, nil
	}
	checks, err := MultiKueueChecks(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	wls := &kueuev1beta2.WorkloadList{}
	if err := r.Client.List(ctx, wls); err != nil {
		return reconcile.Result{}, err
	}
	held := 0
	var requeue []*kueuev1beta2.Workload
	for i := range wls.Items {
		wl := &wls.Items[i]
		// A workload that finished there is done: its result is on the hub, and it must not run
		// again. (Its Finished condition stays with its cluster and its Ready check.)
		if wl.Status.ClusterName == nil || *wl.Status.ClusterName != mc.Name ||
			meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadFinished) {
			continue
		}
		held++
		if check := MultiKueueCheck(wl, checks); check != nil && check.State == kueuev1beta2.CheckStateReady {
			requeue = append(requeue, wl)
		}
	}
	// The record first (one write for the pass): a requeue whose write then fails is tried again
	// next pass and is already named.
	if err := r.record(ctx, mc, requeue); err != nil {
		return reconcile.Result{}, err
	}
	for _, wl := range requeue {
		orig := wl.DeepCopy()
		check := MultiKueueCheck(wl, checks)
		check.State = kueuev1beta2.CheckStateRetry
		check.LastTransitionTime = metav1.NewTime(r.Clock.Now())
		check.Message = fmt.Sprintf("requeued at %s: worker %s was declared lost at %s (epoch %d) after its agent stopped the workload (failover.flotilla.io)",
			r.Clock.Now().UTC().Format(time.RFC3339), mc.Name, lostAt.UTC().Format(time.RFC3339), fencing.Epoch(mc.Annotations))
		if err := r.Client.Status().Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, fmt.Errorf("requeueing Workload %s/%s of lost worker %s: %w", wl.Namespace, wl.Name, mc.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("requeued a workload of a lost worker", "workload", client.ObjectKeyFromObject(wl), "cluster", mc.Name)
	}
	if held > 0 {
		return reconcile.Result{RequeueAfter: RequeueRetry}, nil
	}
	return reconcile.Result{}, nil
}

// record adds wls to the cluster's fencing.AnnotationRequeued for its current epoch (nothing when
// there are none), so that the loss's timeline can follow them to where they run next.
func (r *RequeueReconciler) record(ctx context.Context, mc *clusterv1.ManagedCluster, wls []*kueuev1beta2.Workload) error {
	if len(wls) == 0 {
		return nil
	}
	names := make([]string, 0, len(wls))
	for _, wl := range wls {
		names = append(names, wl.Namespace+"/"+wl.Name)
	}
	prev, _, _ := fencing.RequeuedOf(mc.Annotations) // an unreadable record is replaced
	next := fencing.WithRequeued(prev, fencing.Epoch(mc.Annotations), names).String()
	if mc.Annotations[fencing.AnnotationRequeued] == next {
		return nil
	}
	orig := mc.DeepCopy()
	if mc.Annotations == nil {
		mc.Annotations = map[string]string{}
	}
	mc.Annotations[fencing.AnnotationRequeued] = next
	if err := r.Client.Patch(ctx, mc, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("recording on ManagedCluster %s the workloads requeued from it: %w", mc.Name, err)
	}
	return nil
}

// inConfig names a MultiKueueConfig of the hub's that still lists the cluster, or "".
func (r *RequeueReconciler) inConfig(ctx context.Context, cluster string) (string, error) {
	l := &kueuev1beta2.MultiKueueConfigList{}
	if err := r.Client.List(ctx, l, client.MatchingLabels{ManagedLabel: ManagedValue}); err != nil {
		return "", err
	}
	for _, c := range l.Items {
		if slices.Contains(c.Spec.Clusters, cluster) {
			return c.Name, nil
		}
	}
	return "", nil
}
