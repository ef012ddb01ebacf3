package registration

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/csrs"
)

// Both paths that approve certificates, an administrator's `flotilla accept` and the hub's renewal
// approver, judge a request by the same two questions: does it ask for exactly an agent identity
// of the cluster (agentRequest), and who filed it (spec.username, which the API server sets from
// the requester's credentials and nobody can forge). They differ only in whom they trust to file
// it: the bootstrap identity for a first certificate, the agent itself for a renewal.

// allowedUsages are the key usages an agent's client certificate may carry.
var allowedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
}

// agentRequest checks that csr asks the kube-apiserver-client signer for an agent identity of a
// cluster and for nothing more: common name and groups of an agent, client usages, no subject
// alternative names. It returns the cluster and agent id, or why the request is not an agent's.
func agentRequest(csr *certificatesv1.CertificateSigningRequest) (cluster, agentID string, err error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return "", "", fmt.Errorf("signer %q is not %s", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	cluster, agentID, err = clusteridentity.CheckRequest(csr.Spec.Request)
	if err != nil {
		return "", "", err
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			return "", "", fmt.Errorf("usage %q is not one of a client certificate's %v", u, allowedUsages)
		}
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return "", "", fmt.Errorf("usages %v lack %q", csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes) // CheckRequest parsed it already
	if err != nil {
		return "", "", err
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return "", "", fmt.Errorf("the request names subject alternative names, which a client certificate of an agent has none of")
	}
	return cluster, agentID, nil
}

func approve(ctx context.Context, cs kubernetes.Interface, csr *certificatesv1.CertificateSigningRequest, reason, message string, clk clock.PassiveClock) error {
	_, err := csrs.Approve(ctx, cs, csr, reason, message, clk)
	return err
}
