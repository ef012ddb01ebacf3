package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/clusteridentity"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// pendingRequest is a certificate request the agent filed and waits on.
type pendingRequest struct {
	name string
	key  *ecdsa.PrivateKey
	// deadline ends the wait: the agent then files a new request.
	deadline time.Time
	timeout  time.Duration
}

// newCSR is the certificate request for the agent's identity, with a new key. It is the same
// whether the agent registers or renews; the hub tells the two by who asks.
func newCSR(cluster, agentID string, lifetime time.Duration) (*certificatesv1.CertificateSigningRequest, *ecdsa.PrivateKey, error) {
	request, key, err := clusteridentity.NewRequest(cluster, agentID)
	if err != nil {
		return nil, nil, err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: cluster + "-",
			Labels:       map[string]string{clusteridentity.ClusterNameLabel: cluster},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if lifetime > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(int32(lifetime.Seconds()))
	}
	return csr, key, nil
}

// fileRequest creates a certificate request with cs, to be waited on until now+timeout.
func fileRequest(ctx context.Context, cs kubernetes.Interface, cluster, agentID string, lifetime time.Duration, now time.Time, timeout time.Duration) (*pendingRequest, error) {
	csr, key, err := newCSR(cluster, agentID, lifetime)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	csr, err = cs.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating a certificate request on the hub: %w", err)
	}
	return &pendingRequest{name: csr.Name, key: key, deadline: now.Add(timeout), timeout: timeout}, nil
}

// checkRequest looks once at a pending request. It returns the issued certificate; or nil and
// no error while the request waits; or an error. The wait is over when the error ends it
// (endsWait): the request was denied or deleted, the deadline passed, or the hub refuses the
// credentials. Any other error (a hub that does not answer, or answers 5xx) leaves the request
// pending and is worth trying again.
func checkRequest(ctx context.Context, cs kubernetes.Interface, p *pendingRequest, now time.Time) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	got, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, p.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, &csrGoneError{Name: p.name}
	case err == nil:
		for _, c := range got.Status.Conditions {
			if c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
				return nil, &csrDeniedError{Name: p.name, Type: string(c.Type), Message: c.Message}
			}
		}
		if len(got.Status.Certificate) > 0 {
			return got.Status.Certificate, nil
		}
	}
	if !now.Before(p.deadline) {
		return nil, &approvalTimeoutError{Name: p.name, Timeout: p.timeout, LastErr: err}
	}
	if err != nil {
		return nil, fmt.Errorf("reading certificate request %s: %w", p.name, err)
	}
	return nil, nil
}

// endsWait reports whether err from checkRequest ends the wait for a certificate request.
func endsWait(err error) bool {
	var denied *csrDeniedError
	var gone *csrGoneError
	var timeout *approvalTimeoutError
	return errors.As(err, &denied) || errors.As(err, &gone) || errors.As(err, &timeout) ||
		unauthorized(err) || apierrors.IsForbidden(err)
}

// credentialsFor turns an issued certificate for p's key into a kubeconfig for hub (its address
// and CA).
func credentialsFor(p *pendingRequest, issued []byte, hub *rest.Config) (*credentials, error) {
	cert, err := parseCert(issued)
	if err != nil {
		return nil, fmt.Errorf("certificate request %s: the issued certificate does not parse: %w", p.name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(p.key)
	if err != nil {
		return nil, err
	}
	data, err := kubeconfig.Build("hub", hub.Host, hub.CAData, &clientcmdapi.AuthInfo{
		ClientCertificateData: issued,
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	})
	if err != nil {
		return nil, err
	}
	return &credentials{kubeconfig: data, cert: cert}, nil
}
