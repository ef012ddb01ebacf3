package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
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

	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// PendingRequest is a certificate request an agent filed and waits on: the registration agent's
// own, or an add-on's (internal/agent/addon).
type PendingRequest struct {
	// Name is the request's name on the hub.
	Name string
	key  *ecdsa.PrivateKey
	// deadline ends the wait: the agent then files a new request.
	deadline time.Time
	timeout  time.Duration
}

// KeyPEM is the request's private key, PEM-encoded, to store beside the issued certificate.
func (p *PendingRequest) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(p.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// CertificateRequest is what an agent asks a signer for: a client certificate for Subject.
type CertificateRequest struct {
	// GenerateName and Labels are the request's metadata on the hub.
	GenerateName string
	Labels       map[string]string
	Subject      pkix.Name
	// DNSNames are the certificate's subject alternative names, if any.
	DNSNames   []string
	SignerName string
	// Lifetime asks the signer for this lifetime; zero takes the signer's default.
	Lifetime time.Duration
}

// agentRequest is the certificate request for the agent's identity. It is the same whether the
// agent registers or renews; the hub tells the two by who asks.
func agentRequest(cluster, agentID string, lifetime time.Duration) CertificateRequest {
	return CertificateRequest{
		GenerateName: cluster + "-",
		Labels:       map[string]string{clusteridentity.ClusterNameLabel: cluster},
		Subject:      pkix.Name{CommonName: clusteridentity.User(cluster, agentID), Organization: clusteridentity.Groups(cluster)},
		SignerName:   certificatesv1.KubeAPIServerClientSignerName,
		Lifetime:     lifetime,
	}
}

// newCSR is r as a CertificateSigningRequest, with a new P-256 key.
func newCSR(r CertificateRequest) (*certificatesv1.CertificateSigningRequest, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: r.Subject, DNSNames: r.DNSNames}, key)
	if err != nil {
		return nil, nil, err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: r.GenerateName, Labels: r.Labels},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: r.SignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if r.Lifetime > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(int32(r.Lifetime.Seconds()))
	}
	return csr, key, nil
}

// fileRequest creates a certificate request for the agent's identity with cs, to be waited on
// until now+timeout.
func fileRequest(ctx context.Context, cs kubernetes.Interface, cluster, agentID string, lifetime time.Duration, now time.Time, timeout time.Duration) (*PendingRequest, error) {
	return FileRequest(ctx, cs, agentRequest(cluster, agentID, lifetime), now, timeout)
}

// FileRequest creates r on the hub with cs, to be waited on until now+timeout.
func FileRequest(ctx context.Context, cs kubernetes.Interface, r CertificateRequest, now time.Time, timeout time.Duration) (*PendingRequest, error) {
	csr, key, err := newCSR(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	csr, err = cs.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating a certificate request on the hub: %w", err)
	}
	return &PendingRequest{Name: csr.Name, key: key, deadline: now.Add(timeout), timeout: timeout}, nil
}

// CheckRequest looks once at a pending request. It returns the issued certificate; or nil and
// no error while the request waits; or an error. The wait is over when the error ends it
// (EndsWait): the request was denied or deleted, the deadline passed, or the hub refuses the
// credentials. Any other error (a hub that does not answer, or answers 5xx) leaves the request
// pending and is worth trying again.
func CheckRequest(ctx context.Context, cs kubernetes.Interface, p *PendingRequest, now time.Time) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	got, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, &csrGoneError{Name: p.Name}
	case err == nil:
		for _, c := range got.Status.Conditions {
			if c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
				return nil, &csrDeniedError{Name: p.Name, Type: string(c.Type), Message: c.Message}
			}
		}
		if len(got.Status.Certificate) > 0 {
			return got.Status.Certificate, nil
		}
	}
	if !now.Before(p.deadline) {
		return nil, &approvalTimeoutError{Name: p.Name, Timeout: p.timeout, LastErr: err}
	}
	if err != nil {
		return nil, fmt.Errorf("reading certificate request %s: %w", p.Name, err)
	}
	return nil, nil
}

// EndsWait reports whether err from CheckRequest ends the wait for a certificate request.
func EndsWait(err error) bool {
	var denied *csrDeniedError
	var gone *csrGoneError
	var timeout *approvalTimeoutError
	return errors.As(err, &denied) || errors.As(err, &gone) || errors.As(err, &timeout) ||
		unauthorized(err) || apierrors.IsForbidden(err)
}

// credentialsFor turns an issued certificate for p's key into a kubeconfig for hub (its address
// and CA).
func credentialsFor(p *PendingRequest, issued []byte, hub *rest.Config) (*credentials, error) {
	cert, err := parseCert(issued)
	if err != nil {
		return nil, fmt.Errorf("certificate request %s: the issued certificate does not parse: %w", p.Name, err)
	}
	keyPEM, err := p.KeyPEM()
	if err != nil {
		return nil, err
	}
	data, err := kubeconfig.Build("hub", hub.Host, hub.CAData, &clientcmdapi.AuthInfo{
		ClientCertificateData: issued,
		ClientKeyData:         keyPEM,
	})
	if err != nil {
		return nil, err
	}
	return &credentials{kubeconfig: data, cert: cert}, nil
}
