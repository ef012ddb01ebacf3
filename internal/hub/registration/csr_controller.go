package registration

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/clusteridentity"
)

// RenewalReconciler approves certificate renewals: a request for an agent identity made by that
// same agent (it proves it holds a valid certificate) of a cluster the hub still accepts. First
// requests, made with the bootstrap identity, wait for an administrator (Accept).
type RenewalReconciler struct {
	Client client.Client
	// Certificates approves requests; controller-runtime's client has no approval subresource.
	Certificates kubernetes.Interface
	Clock        clock.PassiveClock
}

var _ reconcile.Reconciler = (*RenewalReconciler)(nil)

// SetupWithManager registers the reconciler.
func (r *RenewalReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("csr-renewal").
		For(&certificatesv1.CertificateSigningRequest{}).
		Complete(r)
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
	if decided(csr) || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return reconcile.Result{}, nil
	}
	cluster, agentID, err := clusteridentity.CheckRequest(csr.Spec.Request)
	if err != nil {
		return reconcile.Result{}, nil // not an agent's request: not ours to judge
	}
	if csr.Spec.Username != clusteridentity.User(cluster, agentID) {
		return reconcile.Result{}, nil // a first request: an administrator approves it
	}
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.Spec.HubAcceptsClient {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, approve(ctx, r.Certificates, csr, "AutoApprovedRenewal",
		fmt.Sprintf("agent %s of accepted cluster %s renewing its certificate", agentID, cluster), r.Clock)
}

func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}

func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

func approve(ctx context.Context, cs kubernetes.Interface, csr *certificatesv1.CertificateSigningRequest, reason, message string, clk clock.PassiveClock) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: reason, Message: message, LastUpdateTime: metav1.NewTime(clk.Now()),
	})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("approving certificate request %s: %w", csr.Name, err)
	}
	return nil
}
