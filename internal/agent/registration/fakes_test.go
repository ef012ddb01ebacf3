package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"github.com/flotilla/flotilla/internal/logtest"
	"math/big"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

const fakeHubURL = "https://hub.test:6443"

func testCluster() *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
}

// testCA signs the certificates of the fake hub.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hub-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// sign issues a certificate for pub valid from notBefore to notAfter.
func (ca *testCA) sign(t *testing.T, subject pkix.Name, pub any, notBefore, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// creds makes hub credentials for the fake hub valid from notBefore to notAfter.
func (ca *testCA) creds(t *testing.T, notBefore, notAfter time.Time) *credentials {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := ca.sign(t, pkix.Name{CommonName: "agent"}, key.Public(), notBefore, notAfter)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := kubeconfig.Build("hub", fakeHubURL, ca.pem(), &clientcmdapi.AuthInfo{
		ClientCertificateData: certPEM, ClientKeyData: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &credentials{kubeconfig: data, cert: cert}
}

// csrMode is how the fake hub treats certificate requests.
type csrMode string

const (
	csrSign         csrMode = "sign"         // signed at once
	csrPending      csrMode = "pending"      // never decided
	csrDeny         csrMode = "deny"         // denied at once
	csrGone         csrMode = "gone"         // 404 when the agent looks for it
	csrUnauthorized csrMode = "unauthorized" // 401 when the agent looks for it
	csrFlaky        csrMode = "flaky"        // 500 when the agent looks for it
)

// fakeCSRs is a hub clientset that handles certificate requests as its mode says.
type fakeCSRs struct {
	*fake.Clientset
	mu       sync.Mutex
	mode     csrMode
	lifetime time.Duration
	created  atomic.Int32
}

func newFakeCSRs(t *testing.T, ca *testCA, mode csrMode) *fakeCSRs {
	f := &fakeCSRs{Clientset: fake.NewClientset(), mode: mode, lifetime: 10 * time.Minute}
	f.PrependReactor("create", "certificatesigningrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
		csr := action.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		csr.Name = fmt.Sprintf("%s%d", csr.GenerateName, f.created.Add(1)) // the fake does not generate names
		switch f.getMode() {
		case csrSign:
			block, _ := pem.Decode(csr.Spec.Request)
			req, err := x509.ParseCertificateRequest(block.Bytes)
			if err != nil {
				t.Errorf("the agent's certificate request does not parse: %v", err)
				return true, nil, err
			}
			now := time.Now()
			csr.Status.Certificate = ca.sign(t, req.Subject, req.PublicKey, now.Add(-time.Minute), now.Add(f.lifetime))
		case csrDeny:
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
				Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Message: "not today",
			}}
		}
		return false, nil, nil // the tracker stores it
	})
	csrs := schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}
	f.PrependReactor("get", "certificatesigningrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
		name := action.(clienttesting.GetAction).GetName()
		switch f.getMode() {
		case csrGone:
			return true, nil, apierrors.NewNotFound(csrs, name)
		case csrUnauthorized:
			return true, nil, apierrors.NewUnauthorized("Unauthorized")
		case csrFlaky:
			return true, nil, apierrors.NewInternalError(fmt.Errorf("etcd is slow"))
		}
		return false, nil, nil
	})
	return f
}

func (f *fakeCSRs) getMode() csrMode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mode
}

func (f *fakeCSRs) setMode(m csrMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode = m
}

// hubClientsWith are HubClients for creds whose clientset is kube.
func hubClientsWith(t *testing.T, creds *credentials, kube *fakeCSRs) *HubClients {
	t.Helper()
	hc, err := newHubClients(creds)
	if err != nil {
		t.Fatal(err)
	}
	hc.Kube = kube
	return hc
}

// testAgent is an agent whose spoke, bootstrap clients and hub are fakes. Its log goes to logs.
func testAgent(t *testing.T, ca *testCA, bootstrap *fakeCSRs, logs *logtest.Recorder, clk clock.WithTicker) (*Agent, *fake.Clientset) {
	t.Helper()
	a, err := New(Options{
		ClusterName: "gpu-east", AgentID: "a1",
		Bootstrap: &rest.Config{Host: fakeHubURL, BearerToken: "token", TLSClientConfig: rest.TLSClientConfig{CAData: ca.pem()}},
		Spoke:     &rest.Config{Host: "https://spoke.test:6443"},
		Poll:      5 * time.Millisecond, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		ApprovalTimeout: 200 * time.Millisecond, RenewalApprovalTimeout: 200 * time.Millisecond,
		Clock: clk,
		Log:   logs.Logger(t, funcr.Options{Verbosity: 1}),
	})
	if err != nil {
		t.Fatal(err)
	}
	spoke := fake.NewClientset()
	a.spoke = spoke
	a.bootstrap = ctrlfake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	a.bootstrapKube = bootstrap
	return a, spoke
}
