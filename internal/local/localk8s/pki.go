package localk8s

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/flotilla/flotilla/internal/certs"
)

// pki is one cluster's certificate authority and the keys its components use, as files in dir.
type pki struct {
	dir string
	ca  *certs.CA
}

// Certificate files a cluster's directory holds.
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saKeyFile       = "sa.key"
	saPubFile       = "sa.pub"
	// The API server's identity towards kubelets (logs, exec): user KubeletClientUser, which a
	// cluster with a real node binds to system:kubelet-api-admin (the kubelet API and nothing
	// else), as kubeadm binds its apiserver-kubelet-client.
	kubeletClientCertFile = "apiserver-kubelet-client.crt"
	kubeletClientKeyFile  = "apiserver-kubelet-client.key"
)

// certLifetime is long enough for any dev fleet; agents' certificates are issued by the cluster's
// kube-controller-manager with their own lifetimes.
const certLifetime = 365 * 24 * time.Hour

func newPKI(dir, clusterName string) (*pki, error) {
	ca, err := certs.NewCA("flotilla-"+clusterName+"-ca", time.Now(), certLifetime)
	if err != nil {
		return nil, err
	}
	p := &pki{dir: dir, ca: ca}
	if err := os.WriteFile(filepath.Join(dir, caCertFile), ca.CertPEM(), 0o600); err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, caKeyFile), ca.Key.(*ecdsa.PrivateKey)); err != nil {
		return nil, err
	}
	// Service-account tokens are signed with their own key, as kube-apiserver expects.
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, saKeyFile), saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, saPubFile), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// servingCert writes the API server's certificate for 127.0.0.1, localhost, the address it
// serves at (when not loopback) and the first IP of the service range (the kubernetes Service,
// which pods on real nodes reach it through).
func (p *pki) servingCert(address string) error {
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(KubernetesServiceIP)}
	if ip := net.ParseIP(address); ip != nil && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	certPEM, keyPEM, err := p.ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, time.Now(), certLifetime)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.dir, servingCertFile), certPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.dir, servingKeyFile), keyPEM, 0o600)
}

// KubeletClientUser is the user the API server is when it calls kubelets.
const KubeletClientUser = "kube-apiserver-kubelet-client"

// kubeletClientCert writes the API server's client certificate for kubelets.
func (p *pki) kubeletClientCert() error {
	certPEM, keyPEM, err := p.clientCert(KubeletClientUser)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.dir, kubeletClientCertFile), certPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.dir, kubeletClientKeyFile), keyPEM, 0o600)
}

// clientCert issues a client certificate: the common name is the user, organizations the groups.
func (p *pki) clientCert(user string, groups ...string) (certPEM, keyPEM []byte, err error) {
	return p.ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, time.Now(), certLifetime)
}

func (p *pki) caPEM() []byte { return p.ca.CertPEM() }

func writeKey(path string, key *ecdsa.PrivateKey) error {
	data, err := certs.KeyPEM(key)
	if err != nil {
		return fmt.Errorf("encoding key %s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o600)
}
