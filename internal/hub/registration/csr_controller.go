package registration

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/csrs"
)

// RenewalReconciler approves certificate renewals: a request for an agent identity made by that
// same agent (it proves it holds a valid certificate) of a cluster the hub accepts. First
// requests, made with the bootstrap identity, wait for an administrator (Accept).
type RenewalReconciler struct {
	Client client.Client
	// Certificates approves requests; controller-runtime's client has no approval subresource.
	Certificates kubernetes.Interface
	Clock        clock.PassiveClock
}

var _ reconcile.Reconciler = (*RenewalReconciler)(nil)

// SetupWithManager registers the reconciler. A change to a cluster (its acceptance above all)
// brings back its pending requests, so a renewal filed while the cluster was briefly not accepted
// is approved once it is again.
func (r *RenewalReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("csr-renewal").
		For(&certificatesv1.CertificateSigningRequest{}).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.pendingRequestsOf)).
		Complete(r)
}

// pendingRequestsOf lists the undecided requests labeled with a cluster's name.
func (r *RenewalReconciler) pendingRequestsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	out, err := csrs.Pending(ctx, r.Client, client.MatchingLabels{clusteridentity.ClusterNameLabel: obj.GetName()})
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the certificate requests of a cluster", "cluster", obj.GetName())
	}
	return out
}

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client,verbs=approve

// Reconcile approves csr if it is an accepted cluster's agent renewing its own certificate.
func (r *RenewalReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if csrs.Decided(csr) {
		return reconcile.Result{}, nil
	}
	cluster, agentID, err := renewal(csr)
	if err != nil {
		// A first request, or not an agent's: not the hub's to approve.
		ctrl.LoggerFrom(ctx).V(1).Info("not approving a certificate request as a renewal", "request", csr.Name, "reason", err.Error())
		return reconcile.Result{}, nil
	}
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.Spec.HubAcceptsClient || !mc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil // approved by the cluster watch once it is accepted again
	}
	return reconcile.Result{}, approve(ctx, r.Certificates, csr, "AutoApprovedRenewal",
		fmt.Sprintf("agent %s of accepted cluster %s renewing its certificate", agentID, cluster), r.Clock)
}

func isRenewal(csr *certificatesv1.CertificateSigningRequest) bool {
	_, _, err := renewal(csr)
	return err == nil
}

// renewal checks that csr is an agent asking, with its own current identity, for a new
// certificate of that same identity, and says why not when it is not.
//
// An add-on agent's user name (system:open-cluster-management:cluster:<c>:addon:<a>:agent:<x>)
// has the shape of an agent of a cluster named "cluster". That name is reserved, so
// agentRequest refuses such a request anyway; the requester is checked first all the same, since
// approving an add-on agent's request here would give it an agent's groups.
func renewal(csr *certificatesv1.CertificateSigningRequest) (cluster, agentID string, err error) {
	if c, a, _, ok := clusteridentity.ParseAddOnUser(csr.Spec.Username); ok {
		return "", "", fmt.Errorf("filed by %q, the agent of add-on %s on cluster %s: only a cluster's agent renews with its own identity",
			csr.Spec.Username, a, c)
	}
	cluster, agentID, err = agentRequest(csr)
	if err != nil {
		return "", "", err
	}
	if user := clusteridentity.User(cluster, agentID); csr.Spec.Username != user {
		return "", "", fmt.Errorf("filed by %q, not by %s itself", csr.Spec.Username, user)
	}
	return cluster, agentID, nil
}
