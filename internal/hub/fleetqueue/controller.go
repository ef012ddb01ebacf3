package fleetqueue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// Resync is how often a FleetQueue is looked at again without an event, at most: figures expire
// without one.
const Resync = 30 * time.Second

// Reconciler keeps each FleetQueue's Kueue objects current.
type Reconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

// SetupWithManager registers the reconciler and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	all := handler.EnqueueRequestsFromMapFunc(r.all)
	return ctrl.NewControllerManagedBy(mgr).
		Named("fleetqueue").
		For(&queuev1alpha1.FleetQueue{}).
		Owns(&kueuev1beta2.ClusterQueue{}).
		Owns(&kueuev1beta2.Cohort{}).
		Owns(&kueuev1beta2.ResourceFlavor{}).
		Owns(&kueuev1beta2.LocalQueue{}).
		Owns(&workv1.ManifestWork{}).
		// The workers: a config's clusters (a worker joining, leaving, declared lost) and their
		// figures. A change of free amounts costs a computation and no write.
		Watches(&kueuev1beta2.MultiKueueConfig{}, all).
		Watches(&kueuev1beta2.AdmissionCheck{}, all).
		Watches(&usagev1alpha1.ResourceUsage{}, all).
		Complete(r)
}

// all maps any event to every FleetQueue.
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &queuev1alpha1.FleetQueueList{}
	if err := r.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing FleetQueues")
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])})
	}
	return out
}

// +kubebuilder:rbac:groups=queue.flotilla.io,resources=fleetqueues,verbs=get;list;watch
// +kubebuilder:rbac:groups=queue.flotilla.io,resources=fleetqueues/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues;cohorts;resourceflavors;localqueues,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks;multikueueconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=usage.flotilla.io,resources=resourceusages,verbs=get;list;watch

// Reconcile writes one FleetQueue's objects and its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	fq := &queuev1alpha1.FleetQueue{}
	if err := r.Client.Get(ctx, req.NamespacedName, fq); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !fq.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil // the garbage collector removes what it owns
	}
	if err := Validate(fq); err != nil {
		return reconcile.Result{}, r.setStatus(ctx, fq, nil, metav1.ConditionFalse, queuev1alpha1.ReasonInvalid, err.Error()+"; nothing was changed")
	}
	now := r.Clock.Now()
	workers, configured, why, err := r.workers(ctx, fq.Spec.AdmissionCheck, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	if why != "" {
		return reconcile.Result{RequeueAfter: Resync}, r.setStatus(ctx, fq, nil, metav1.ConditionFalse, queuev1alpha1.ReasonCheckMissing, why)
	}
	fleet := Count(workers)
	d, err := Compute(fq, fleet)
	if err != nil {
		return reconcile.Result{}, err
	}
	// Every cluster of the config gets the teams' queues, with figures or not: MultiKueue may
	// send it the teams' jobs.
	notOurs, err := r.apply(ctx, fq, d, configured)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case len(notOurs) > 0:
		err = r.setStatus(ctx, fq, &fleet, metav1.ConditionFalse, queuev1alpha1.ReasonNotOurs,
			fmt.Sprintf("left alone, not written by the hub for this FleetQueue (no label %s=%s): %s; rename or remove them, or rename the FleetQueue or team",
				FleetQueueLabel, fq.Name, strings.Join(notOurs, ", ")))
	case len(d.Problems) > 0:
		err = r.setStatus(ctx, fq, &fleet, metav1.ConditionFalse, queuev1alpha1.ReasonInvalid, strings.Join(d.Problems, "; "))
	default:
		err = r.setStatus(ctx, fq, &fleet, metav1.ConditionTrue, queuev1alpha1.ReasonApplied,
			fmt.Sprintf("quotas follow %d workers of AdmissionCheck %s", fleet.Workers, fq.Spec.AdmissionCheck))
	}
	return reconcile.Result{RequeueAfter: Resync}, err
}

// workers are the check's config's clusters whose figures are usable now, in the config's order,
// and configured all the config's clusters; why says what is missing when the check or its
// config is.
func (r *Reconciler) workers(ctx context.Context, check string, now time.Time) (workers []Worker, configured []string, why string, err error) {
	ac := &kueuev1beta2.AdmissionCheck{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: check}, ac); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Sprintf("spec.admissionCheck: AdmissionCheck %s does not exist: create it (controllerName %s) or name an existing one", check, kueuev1beta2.MultiKueueControllerName), nil
		}
		return nil, nil, "", err
	}
	p := ac.Spec.Parameters
	if ac.Spec.ControllerName != kueuev1beta2.MultiKueueControllerName || p == nil || p.Kind != "MultiKueueConfig" || p.APIGroup != kueuev1beta2.GroupVersion.Group {
		return nil, nil, fmt.Sprintf("spec.admissionCheck: AdmissionCheck %s is not MultiKueue's (controllerName %s with parameters naming a MultiKueueConfig): name the hub's MultiKueue check", check, kueuev1beta2.MultiKueueControllerName), nil
	}
	cfg := &kueuev1beta2.MultiKueueConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: p.Name}, cfg); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Sprintf("MultiKueueConfig %s of AdmissionCheck %s does not exist yet: the hub writes it once the check's placement has decisions", p.Name, check), nil
		}
		return nil, nil, "", err
	}
	var out []Worker
	for _, name := range cfg.Spec.Clusters {
		u := &usagev1alpha1.ResourceUsage{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: name, Name: usagev1alpha1.ResourceUsageName}, u)
		switch {
		case apierrors.IsNotFound(err):
			continue // no figures: counts for nothing
		case err != nil:
			return nil, nil, "", err
		}
		if u.Status.Valid(now) {
			out = append(out, Worker{Name: name, Status: &u.Status})
		}
	}
	return out, cfg.Spec.Clusters, "", nil
}

// setStatus writes the Ready condition and, when fleet is given, the fleet's figures.
func (r *Reconciler) setStatus(ctx context.Context, fq *queuev1alpha1.FleetQueue, fleet *Fleet, status metav1.ConditionStatus, reason, msg string) error {
	orig := fq.DeepCopy()
	if fleet != nil {
		fq.Status.Workers = fleet.Workers
		fq.Status.Models = nil
		for _, m := range fleet.Models {
			m.Flavor = FlavorName(fq.Name, m.Flavor)
			fq.Status.Models = append(fq.Status.Models, m)
		}
	}
	meta.SetStatusCondition(&fq.Status.Conditions, metav1.Condition{Type: queuev1alpha1.ConditionReady, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: fq.Generation})
	if equality.Semantic.DeepEqual(orig.Status, fq.Status) { // SetStatusCondition keeps an unchanged condition's time
		return nil
	}
	if err := r.Client.Status().Patch(ctx, fq, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return errors.Join(fmt.Errorf("writing the status of FleetQueue %s", fq.Name), err)
	}
	return nil
}
