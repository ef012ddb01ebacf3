package registration

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Keys of the hub kubeconfig Secret on the spoke.
const (
	KubeconfigKey  = "kubeconfig"
	ClusterNameKey = "cluster-name"
	AgentNameKey   = "agent-name"
)

// credentials are the agent's hub identity: a kubeconfig with its client certificate.
type credentials struct {
	kubeconfig []byte
	cert       *x509.Certificate
}

func (c *credentials) restConfig() (*rest.Config, error) {
	return clientcmd.RESTConfigFromKubeConfig(c.kubeconfig)
}

// renewAt is when the agent renews the credentials (RenewAt).
func (c *credentials) renewAt() time.Time { return RenewAt(c.cert) }

// RenewAt is when an agent asks for a new certificate in place of cert: 80% into its lifetime.
// The add-on agent renews add-on certificates at the same point.
func RenewAt(cert *x509.Certificate) time.Time {
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotBefore.Add(life * 8 / 10)
}

// loadCredentials reads the Secret; it returns nil, and why, when there is none or it is not
// usable (the agent then registers again), and an error only when the Secret cannot be read.
func loadCredentials(ctx context.Context, spoke kubernetes.Interface, ns, name, cluster string, now time.Time) (*credentials, string, error) {
	s, err := spoke.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "no hub kubeconfig Secret yet", nil
	}
	if err != nil {
		return nil, "", err
	}
	if string(s.Data[ClusterNameKey]) != cluster {
		return nil, fmt.Sprintf("the Secret is for cluster %q, not %q", s.Data[ClusterNameKey], cluster), nil
	}
	cfg, err := clientcmd.Load(s.Data[KubeconfigKey])
	if err != nil {
		return nil, "the Secret's kubeconfig does not parse: " + err.Error(), nil
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil {
		return nil, fmt.Sprintf("the Secret's kubeconfig has no context %q", cfg.CurrentContext), nil
	}
	auth := cfg.AuthInfos[kctx.AuthInfo]
	if auth == nil {
		return nil, "the Secret's kubeconfig has no user", nil
	}
	if _, err := clientcmd.RESTConfigFromKubeConfig(s.Data[KubeconfigKey]); err != nil {
		return nil, "the Secret's kubeconfig is not usable: " + err.Error(), nil
	}
	cert, err := parseCert(auth.ClientCertificateData)
	if err != nil {
		return nil, "the Secret's certificate does not parse: " + err.Error(), nil
	}
	if !now.Before(cert.NotAfter) {
		return nil, "the Secret's certificate expired at " + cert.NotAfter.Format(time.RFC3339), nil
	}
	return &credentials{kubeconfig: s.Data[KubeconfigKey], cert: cert}, "", nil
}

// saveCredentials stores the credentials in the Secret, creating it if needed.
func saveCredentials(ctx context.Context, spoke kubernetes.Interface, ns, name, cluster, agentID string, creds *credentials) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data: map[string][]byte{
			KubeconfigKey: creds.kubeconfig, ClusterNameKey: []byte(cluster), AgentNameKey: []byte(agentID),
		},
	}
	_, err := spoke.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = spoke.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
	}
	return err
}

// ParseCertificate parses the first PEM certificate of data.
func ParseCertificate(data []byte) (*x509.Certificate, error) { return parseCert(data) }

func parseCert(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
