package csrs

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// HasCondition reports whether the request has a condition of type t.
func HasCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

// Decided reports whether the request was approved, denied or failed: nothing is left to decide.
func Decided(csr *certificatesv1.CertificateSigningRequest) bool {
	return HasCondition(csr, certificatesv1.CertificateApproved) || HasCondition(csr, certificatesv1.CertificateDenied) ||
		HasCondition(csr, certificatesv1.CertificateFailed)
}

// Approve adds the Approved condition with reason and message, and returns the request as the
// API server then holds it.
func Approve(ctx context.Context, cs kubernetes.Interface, csr *certificatesv1.CertificateSigningRequest, reason, message string,
	clk clock.PassiveClock) (*certificatesv1.CertificateSigningRequest, error) {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: reason, Message: message, LastUpdateTime: metav1.NewTime(clk.Now()),
	})
	out, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("approving certificate request %s: %w", csr.Name, err)
	}
	return out, nil
}

// Pending lists the undecided requests that opts select, as reconcile requests.
func Pending(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]reconcile.Request, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	var out []reconcile.Request
	for i := range list.Items {
		if !Decided(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return out, nil
}
