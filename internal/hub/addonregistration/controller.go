package addonregistration

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/csrs"
)

// Reason and message of an approval, as OCM's add-on manager writes them.
const (
	ApprovedReason  = "AutoApprovedByHubCSRApprovingController"
	approvedMessage = "Auto approving addon agent certificate."
)

// Reconciler approves add-on agents' certificate requests (see the package documentation).
type Reconciler struct {
	Client client.Client
	// Certificates approves requests; controller-runtime's client has no approval subresource.
	Certificates kubernetes.Interface
	Clock        clock.PassiveClock
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the reconciler, woken by requests and by changes to add-ons and
// clusters.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-csr-approval").
		For(&certificatesv1.CertificateSigningRequest{}).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.pending(ctx, client.MatchingLabels{clusteridentity.ClusterNameLabel: o.GetNamespace(), clusteridentity.AddOnNameLabel: o.GetName()})
		})).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.pending(ctx, client.MatchingLabels{clusteridentity.ClusterNameLabel: o.GetName()}, client.HasLabels{clusteridentity.AddOnNameLabel})
		})).
		Complete(r)
}

// pending lists the undecided requests with the given labels. The labels only choose what to
// look at again: every request is judged by its content.
func (r *Reconciler) pending(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	out, err := csrs.Pending(ctx, r.Client, opts...)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing add-on certificate requests")
	}
	return out
}

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client,verbs=approve
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch

// Reconcile approves the request if it is an add-on agent's that the hub can vouch for.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if csrs.Decided(csr) {
		return reconcile.Result{}, nil
	}
	ar, err := addOnRequest(csr)
	if err != nil {
		return reconcile.Result{}, nil // not an add-on request this hub approves
	}
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: ar.Cluster}, mc); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		mc = nil
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ar.Cluster, Name: ar.AddOn}, mca); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		mca = nil
	}
	if err := registered(ar, mc, mca); err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("add-on certificate request not approved yet", "request", csr.Name, "why", err.Error())
		return reconcile.Result{}, nil // a change to the add-on or the cluster brings it back
	}
	_, err = csrs.Approve(ctx, r.Certificates, csr, ApprovedReason, approvedMessage, r.Clock)
	return reconcile.Result{}, err
}
