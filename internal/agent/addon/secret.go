package addon

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"maps"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// Keys of an add-on's credentials Secret on the spoke, as OCM's agent writes them. An add-on that
// mounts the Secret reads its hub kubeconfig at <mount>/kubeconfig.
const (
	// KubeconfigKey holds a kubeconfig for the hub, with the certificate and key inline; only
	// for the kube-apiserver client signer.
	KubeconfigKey = "kubeconfig"
	// TLSCertKey and TLSKeyKey hold the certificate and its private key, PEM-encoded.
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
	// ClusterNameKey holds the managed cluster's name.
	ClusterNameKey = "cluster-name"
)

// hubEndpoint is where the hub is and the CA that signs its serving certificate.
type hubEndpoint struct {
	Host string
	CA   []byte
}

// secretData is the content of an add-on's credentials Secret for signer: the certificate and
// its key, the cluster's name and, for the kube-apiserver client signer, a kubeconfig that
// reaches hub with them.
func secretData(signer, cluster string, hub hubEndpoint, certPEM, keyPEM []byte) (map[string][]byte, error) {
	data := map[string][]byte{TLSCertKey: certPEM, TLSKeyKey: keyPEM, ClusterNameKey: []byte(cluster)}
	if signer != addonv1alpha1.KubeAPIServerClientSignerName {
		return data, nil
	}
	kc, err := kubeconfig.Build("hub", hub.Host, hub.CA, &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM})
	if err != nil {
		return nil, err
	}
	data[KubeconfigKey] = kc
	return data, nil
}

// withData returns the Secret data have with want's keys set to want's values, and whether that
// changed anything; keys that someone else added stay.
func withData(have, want map[string][]byte) (map[string][]byte, bool) {
	out := maps.Clone(have)
	if out == nil {
		out = map[string][]byte{}
	}
	changed := false
	for k, v := range want {
		if !bytes.Equal(out[k], v) {
			out[k], changed = v, true
		}
	}
	return out, changed
}

// usableCertificate returns the certificate in an add-on's Secret data if it serves: it parses,
// matches the key beside it, is for subject and has not expired at now. Otherwise it returns
// nil and why the agent requests a new one.
func usableCertificate(data map[string][]byte, subject pkix.Name, now time.Time) (*x509.Certificate, string) {
	certPEM, keyPEM := data[TLSCertKey], data[TLSKeyKey]
	if len(certPEM) == 0 {
		return nil, "no certificate yet"
	}
	cert, err := registration.ParseCertificate(certPEM)
	if err != nil {
		return nil, "the stored certificate does not parse: " + err.Error()
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, "the stored key does not match the certificate: " + err.Error()
	}
	if !sameSubject(cert.Subject, subject) {
		return nil, fmt.Sprintf("the stored certificate is for %q in %v, the registration asks for %q in %v",
			cert.Subject.CommonName, cert.Subject.Organization, subject.CommonName, subject.Organization)
	}
	if !now.Before(cert.NotAfter) {
		return nil, "the stored certificate expired at " + cert.NotAfter.UTC().Format(time.RFC3339)
	}
	return cert, ""
}
