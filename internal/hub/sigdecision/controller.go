package sigdecision

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// Reconciler mirrors each Placement's OCM PlacementDecisions into SIG PlacementDecisions.
type Reconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// APIReader reads a placement's SIG PlacementDecisions from the API server before they are
	// rewritten; the manager's is taken when nil.
	APIReader client.Reader
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the reconciler and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("sigdecision").
		// Only a placement's existence (and UID) matters here; its decisions come from the OCM
		// PlacementDecisions it controls.
		For(&clusterv1beta1.Placement{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1beta1.PlacementDecision{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1beta1.Placement{}, handler.OnlyControllerOwner())).
		// A SIG slice someone else changed or deleted is put back.
		Owns(&multiclusterv1alpha1.PlacementDecision{}).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=get;list;watch
// A controller reference blocks the owner's deletion, which needs the right to update its finalizers.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=get;list;watch
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=placementdecisions,verbs=get;list;watch;create;update;patch;delete

// Reconcile makes the SIG PlacementDecisions of one placement mirror its OCM ones.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// A placement being deleted takes its SIG slices with it (garbage collection of owned objects).
	if !p.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	// The cache's objects are only read here: Desired and UpToDate copy what they keep.
	ocm := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, ocm, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, err
	}
	desired := Desired(p.Name, controlled(string(p.UID), ocm.Items))
	cached := &multiclusterv1alpha1.PlacementDecisionList{}
	if err := r.Client.List(ctx, cached, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, err
	}
	if UpToDate(p.Namespace, controlled(string(p.UID), cached.Items), desired) {
		return reconcile.Result{}, nil
	}
	// The plan starts from what consumers see, not from a cache that may lag our last writes.
	// All of the namespace is read, not a label selection: a slice of ours whose labels someone
	// removed is still ours to fix.
	live := &multiclusterv1alpha1.PlacementDecisionList{}
	if err := r.APIReader.List(ctx, live, client.InNamespace(p.Namespace)); err != nil {
		return reconcile.Result{}, err
	}
	mine := controlled(string(p.UID), live.Items)
	objs := map[string]*multiclusterv1alpha1.PlacementDecision{}
	for i := range mine {
		objs[mine[i].Name] = &mine[i]
	}
	for _, st := range Steps(p.Namespace, mine, desired) {
		var err error
		if st.Delete {
			err = r.delete(ctx, objs[st.Slice.Name])
		} else {
			err = r.write(ctx, p, objs, st.Slice)
		}
		if err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// write makes the SIG PlacementDecision named s.Name hold s: created (controlled by p) if
// missing, else updated with the resourceVersion read, so that a write based on an outdated
// object fails and the placement is mirrored again. Labels other than ours are kept.
func (r *Reconciler) write(ctx context.Context, p *clusterv1beta1.Placement, objs map[string]*multiclusterv1alpha1.PlacementDecision,
	s scheduler.PlacementDecisionSlice) error {
	d, ok := objs[s.Name]
	if !ok {
		d = &multiclusterv1alpha1.PlacementDecision{
			ObjectMeta:    metav1.ObjectMeta{Name: s.Name, Namespace: p.Namespace, Labels: s.Labels},
			Decisions:     sigDecisions(p.Namespace, s),
			SchedulerName: SchedulerName,
		}
		if err := controllerutil.SetControllerReference(p, d, r.Client.Scheme()); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, d); err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil // the placement goes with its namespace
			}
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("PlacementDecision.multicluster.x-k8s.io %s/%s exists and is not controlled by Placement %s: "+
					"delete it so the hub can mirror the placement's decisions there: %w", p.Namespace, s.Name, p.Name, err)
			}
			return fmt.Errorf("creating PlacementDecision.multicluster.x-k8s.io %s/%s: %w", p.Namespace, s.Name, err)
		}
		objs[s.Name] = d
		return nil
	}
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	for _, k := range ourLabels {
		delete(d.Labels, k)
	}
	for k, v := range s.Labels {
		d.Labels[k] = v
	}
	d.Decisions = sigDecisions(p.Namespace, s)
	d.SchedulerName = SchedulerName
	if err := r.Client.Update(ctx, d); err != nil {
		return fmt.Errorf("updating PlacementDecision.multicluster.x-k8s.io %s/%s: %w", p.Namespace, s.Name, err)
	}
	return nil
}

// delete deletes a SIG slice of the placement, only the one that was read.
func (r *Reconciler) delete(ctx context.Context, d *multiclusterv1alpha1.PlacementDecision) error {
	if d == nil {
		return nil
	}
	if err := r.Client.Delete(ctx, d, client.Preconditions{UID: &d.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting PlacementDecision.multicluster.x-k8s.io %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}
