package flower

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/certs"
)

// Lifetimes. A certificate is made again when a third of its life is left, or the CA when a
// year is.
const (
	caLifetime      = 10 * 365 * 24 * time.Hour
	caRenewBefore   = 365 * 24 * time.Hour
	servingLifetime = 365 * 24 * time.Hour
	caCommonName    = "flotilla-flower-ca"
)

// Keys of the Secrets and ConfigMaps.
const (
	keyCACert = "ca.crt"
	keyCAKey  = "ca.key"
)

// readCA is the CA of CASecret's data, or why it cannot be used at now.
func readCA(s *corev1.Secret, now time.Time) (*certs.CA, string) {
	ca, err := certs.ParseCA(s.Data[keyCACert], s.Data[keyCAKey])
	if err != nil {
		return nil, fmt.Sprintf("unreadable (%v)", err)
	}
	if now.After(ca.Cert.NotAfter.Add(-caRenewBefore)) {
		return nil, fmt.Sprintf("expires at %s", ca.Cert.NotAfter.Format(time.RFC3339))
	}
	return ca, ""
}

// newCASecret makes a CA and its Secret.
func newCASecret(now time.Time) (*corev1.Secret, error) {
	ca, err := certs.NewCA(caCommonName, now, caLifetime)
	if err != nil {
		return nil, err
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: CASecret, Labels: ownerLabels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{keyCACert: ca.CertPEM(), keyCAKey: key},
	}, nil
}

// servingTemplate is the SuperLink's serving certificate's subject, names and usage.
func servingTemplate(o Options) x509.Certificate {
	dns, ips := o.SANs()
	return x509.Certificate{
		Subject:     pkix.Name{CommonName: SuperLinkName + "." + Namespace + ".svc"},
		DNSNames:    dns,
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
}

// newServingSecret issues the SuperLink's serving certificate from ca.
func newServingSecret(ca *certs.CA, o Options, now time.Time) (*corev1.Secret, error) {
	cert, key, err := ca.Issue(servingTemplate(o), now, servingLifetime)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ServingSecret, Labels: ownerLabels()},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key, keyCACert: ca.CertPEM()},
	}, nil
}

// servingProblem says why the serving Secret s will not do for ca and o at now ("" when it will),
// and when it is to be renewed.
func servingProblem(s *corev1.Secret, ca *certs.CA, o Options, now time.Time) (string, time.Time) {
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return fmt.Sprintf("unreadable (%v)", err), time.Time{}
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Sprintf("unreadable (%v)", err), time.Time{}
	}
	if !bytes.Equal(s.Data[keyCACert], ca.CertPEM()) {
		return "carries another CA certificate", time.Time{}
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Sprintf("does not verify against the CA (%v)", err), time.Time{}
	}
	want := servingTemplate(o)
	if !slices.Equal(leaf.DNSNames, want.DNSNames) || !slices.EqualFunc(leaf.IPAddresses, want.IPAddresses, net.IP.Equal) {
		return fmt.Sprintf("names %v %v, not %v %v", leaf.DNSNames, leaf.IPAddresses, want.DNSNames, want.IPAddresses), time.Time{}
	}
	renew := leaf.NotAfter.Add(-leaf.NotAfter.Sub(leaf.NotBefore) / 3)
	if !now.Before(renew) {
		return fmt.Sprintf("expires at %s", leaf.NotAfter.Format(time.RFC3339)), time.Time{}
	}
	return "", renew
}

// pemHash is a short hash of PEM data, for pod annotations that restart pods when it changes.
func pemHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// certOnly keeps the CERTIFICATE blocks of data: what may leave the hub.
func certOnly(data []byte) []byte {
	var out []byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		if b.Type == "CERTIFICATE" {
			out = append(out, pem.EncodeToMemory(b)...)
		}
	}
}
