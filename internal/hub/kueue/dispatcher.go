package kueue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

// DispatcherReconciler is Flotilla's MultiKueue dispatcher: for each workload on the hub waiting for its
// MultiKueue admission check, it nominates workers (status.nominatedClusterNames) in the order
// of the check's MultiKueueConfig, which the placement ranks best first. It offers a workload
// only to the workers where its gangs fit (internal/core/workloadfit: every pod of each pod set on a
// node with that much of the extended resource and model free, by the worker's live
// ResourceUsage), then to those without figures; a worker where it does not fit is not offered
// it, and a workload that fits no worker waits on the hub with an event (NoWorkerFits) giving
// each worker's numbers, and is looked at again each round, or at once when a worker's figures
// show more room than before (Freed). It offers the workload to one
// worker, and to one more after each round until a worker admits it (rounds start at Round and
// double), except while a worker it was offered to still fits it (Holding, for HoldRounds
// rounds): that worker is slow, not full. Kueue's MultiKueue then copies the workload to the
// nominated workers; the first to admit it runs it.
//
// A worker's figures lag its nodes by a few seconds. So that two workloads judged in between are
// not both offered the one node that holds only one of them, the gangs offered to a worker count
// as used until its figures were observed workloadfit.DefaultSettle after the offer (Claims).
//
// It acts only when Kueue on the hub runs with multiKueue.dispatcherName DispatcherName: with
// Kueue's own dispatchers the two would fight over the nominations.
type DispatcherReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
	// Round is DefaultRound when zero.
	Round time.Duration
	// Recorder records why a workload fits no worker; the manager's when nil.
	Recorder events.EventRecorder

	// Claims are the gangs offered to each worker that its figures may not count yet
	// (workloadfit.Claims); a fresh set when nil.
	Claims *workloadfit.Claims

	mu       sync.Mutex
	reported map[types.UID]string // the last NoWorkerFits message per workload
}

// ReasonNoWorkerFits is the reason of the event on a workload whose pods fit no worker now.
const ReasonNoWorkerFits = "NoWorkerFits"

var _ reconcile.Reconciler = (*DispatcherReconciler)(nil)

// SetupWithManager registers the dispatcher.
func (d *DispatcherReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Round <= 0 {
		d.Round = DefaultRound
	}
	if d.Claims == nil {
		d.Claims = &workloadfit.Claims{}
	}
	if d.Recorder == nil {
		d.Recorder = mgr.GetEventRecorder("kueue-dispatcher")
	}
	waiting := predicate.NewPredicateFuncs(func(o client.Object) bool {
		wl, ok := o.(*kueuev1beta2.Workload)
		return ok && wl.Status.ClusterName == nil && wl.Status.Admission != nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kueue-dispatcher").
		For(&kueuev1beta2.Workload{}, builder.WithPredicates(waiting)).
		// A worker leaving or joining a config, or becoming active or not, changes the choice of
		// every waiting workload at once. So do a worker's figures showing room that was not there
		// (Freed): without that, a waiting workload would read them again only at its next round.
		// Figures that only shrink wake nothing (they change with every pod).
		Watches(&kueuev1beta2.MultiKueueConfig{}, handler.EnqueueRequestsFromMapFunc(d.waiting)).
		Watches(&kueuev1beta2.MultiKueueCluster{}, handler.EnqueueRequestsFromMapFunc(d.waiting)).
		Watches(&usagev1alpha1.ResourceUsage{}, handler.EnqueueRequestsFromMapFunc(d.waiting), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				before, ok1 := e.ObjectOld.(*usagev1alpha1.ResourceUsage)
				after, ok2 := e.ObjectNew.(*usagev1alpha1.ResourceUsage)
				return ok1 && ok2 && Freed(before, after)
			},
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Complete(d)
}

// waiting maps any event to the workloads waiting for a worker.
func (d *DispatcherReconciler) waiting(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &kueuev1beta2.WorkloadList{}
	if err := d.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Workloads")
		return nil
	}
	var out []reconcile.Request
	for i := range l.Items {
		if wl := &l.Items[i]; wl.Status.ClusterName == nil && wl.Status.Admission != nil {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(wl)})
		}
	}
	return out
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=usage.flotilla.io,resources=resourceusages,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors,verbs=get;list;watch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile nominates the workers of one workload.
func (d *DispatcherReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	wl := &kueuev1beta2.Workload{}
	if err := d.Client.Get(ctx, req.NamespacedName, wl); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	checks, err := d.multiKueueChecks(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	check := MultiKueueCheck(wl, checks)
	if !Dispatchable(wl, check) {
		return reconcile.Result{}, nil
	}
	ranked, err := d.workers(ctx, string(check.Name))
	if err != nil || len(ranked) == 0 {
		return reconcile.Result{}, err
	}
	now := d.Clock.Now()
	gangs := workloadfit.Gangs(wl, FlavorLabels(ctx, d.Client))
	verdicts := JudgeGangs(ctx, d.Client, wl.UID, gangs, ranked, d.Claims, now)
	order := workloadfit.Order(verdicts)
	d.report(wl, verdicts, order)
	rounds := Rounds(Since(wl), now, d.Round)
	want := Nominate(ranked, order, wl.Status.NominatedClusterNames, rounds, Holding(wl.Status.NominatedClusterNames, verdicts, rounds))
	if !slices.Equal(want, wl.Status.NominatedClusterNames) {
		for _, w := range want {
			if !slices.Contains(wl.Status.NominatedClusterNames, w) {
				d.Claims.Offer(w, wl.UID, gangs, now)
			}
		}
		orig := wl.DeepCopy()
		wl.Status.NominatedClusterNames = want
		if err := d.Client.Status().Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, fmt.Errorf("nominating workers %v for Workload %s: %w", want, req.NamespacedName, err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("nominated workers", "workload", req.NamespacedName, "workers", want, "round", rounds)
	}
	switch {
	case len(order) < len(ranked):
		// Workers where the workload does not fit now may have room later: look again next round.
		return reconcile.Result{RequeueAfter: d.Round}, nil
	case len(want) >= len(order):
		return reconcile.Result{}, nil // every worker has it: nothing more to offer
	}
	next := RoundEnd(Since(wl), rounds, d.Round).Sub(now)
	return reconcile.Result{RequeueAfter: max(next, 10*time.Millisecond)}, nil
}

// multiKueueChecks names the AdmissionChecks of Kueue's MultiKueue controller.
func (d *DispatcherReconciler) multiKueueChecks(ctx context.Context) (map[string]bool, error) {
	return MultiKueueChecks(ctx, d.Client)
}

// workers are the active workers of the MultiKueue check's config, in its order.
func (d *DispatcherReconciler) workers(ctx context.Context, check string) ([]string, error) {
	_, all, err := ConfigWorkers(ctx, d.Client, check)
	var out []string
	for _, w := range all {
		if w.Active {
			out = append(out, w.Name)
		}
	}
	return out, err
}

// report records an event on a workload that fits no worker, once per change of the verdicts,
// naming each worker's numbers; and forgets it once some worker is offered it.
func (d *DispatcherReconciler) report(wl *kueuev1beta2.Workload, verdicts []workloadfit.Verdict, order []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reported == nil {
		d.reported = map[types.UID]string{}
	}
	if len(order) > 0 {
		delete(d.reported, wl.UID)
		return
	}
	why := workloadfit.Summary(verdicts)
	if d.reported[wl.UID] == why {
		return
	}
	d.reported[wl.UID] = why
	if d.Recorder != nil {
		d.Recorder.Eventf(wl, nil, corev1.EventTypeWarning, ReasonNoWorkerFits, "Dispatch", "no worker has room for its pods now; it waits on the hub: %s", why)
	}
}
