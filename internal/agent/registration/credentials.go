package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/clusteridentity"
	"github.com/flotilla/flotilla/internal/kubeconfig"
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

// renewAt is 80% into the certificate's lifetime.
func (c *credentials) renewAt() time.Time {
	life := c.cert.NotAfter.Sub(c.cert.NotBefore)
	return c.cert.NotBefore.Add(life * 8 / 10)
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

// requestCertificate creates a certificate request for the agent's identity with the given
// client and waits until it is signed or denied (a *csrDeniedError). hub is the hub's address and
// CA for the kubeconfig.
func requestCertificate(ctx context.Context, hubClient kubernetes.Interface, hub *rest.Config, cluster, agentID string, lifetime time.Duration, poll time.Duration) (*credentials, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: clusteridentity.User(cluster, agentID), Organization: clusteridentity.Groups(cluster)},
	}, key)
	if err != nil {
		return nil, err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: cluster + "-",
			Labels:       map[string]string{clusteridentity.ClusterNameLabel: cluster},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if lifetime > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(int32(lifetime.Seconds()))
	}
	csr, err = hubClient.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating a certificate request on the hub: %w", err)
	}
	var issued []byte
	err = wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		got, err := hubClient.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil // transient; keep waiting
		}
		for _, c := range got.Status.Conditions {
			if c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
				return false, &csrDeniedError{Name: csr.Name, Type: string(c.Type), Message: c.Message}
			}
		}
		issued = got.Status.Certificate
		return len(issued) > 0, nil
	})
	if err != nil {
		return nil, err
	}
	cert, err := parseCert(issued)
	if err != nil {
		return nil, fmt.Errorf("certificate request %s: the issued certificate does not parse: %w", csr.Name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
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

func parseCert(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
