package addon

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

// fakeHub names the certificate requests created on it (the fake clientset ignores
// generateName) and signs them with a CA of its own when asked.
type fakeHub struct {
	*fake.Clientset
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	n      int
}

func newFakeHub(t *testing.T) *fakeHub {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hub-ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: epoch.Add(-time.Hour), NotAfter: epoch.Add(48 * time.Hour), KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHub{Clientset: fake.NewClientset(), caCert: ca, caKey: key}
	h.PrependReactor("create", "certificatesigningrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		csr := a.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		h.n++
		csr.Name = fmt.Sprintf("%s%d", csr.GenerateName, h.n)
		return false, nil, nil
	})
	return h
}

// sign issues the certificate request name for life from notBefore.
func (h *fakeHub) sign(t *testing.T, name string, notBefore time.Time, life time.Duration) {
	t.Helper()
	ctx := context.Background()
	csr, err := h.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(h.n + 1)), Subject: req.Subject, DNSNames: req.DNSNames,
		NotBefore: notBefore, NotAfter: notBefore.Add(life),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, h.caCert, req.PublicKey, h.caKey)
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if _, err := h.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (h *fakeHub) requests(t *testing.T) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	l, err := h.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// credentialsLoopFor is an agent of cluster gpu-east whose hub holds mca and hub's requests, its
// hub client, and a step function that runs one round of its credentials loop and returns the wait until the next.
func credentialsLoopFor(t *testing.T, clk clock.WithTicker, hub *fakeHub, spoke *fake.Clientset, mca *addonv1alpha1.ManagedClusterAddOn) (*Agent, ctrlclient.Client, func() time.Duration) {
	t.Helper()
	hubClient := ctrlfake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mca).
		WithStatusSubresource(&addonv1alpha1.ManagedClusterAddOn{}).Build()
	a := &Agent{opts: Options{
		ClusterName: "gpu-east", AgentID: "a1", Poll: time.Second, Resync: 2 * time.Hour, ApprovalTimeout: 10 * time.Minute,
		InitialBackoff: time.Second, Clock: clk, Log: logr.Discard(),
	}, spoke: spoke}
	hubConfig := &rest.Config{Host: "https://hub.test:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("hub CA")}}
	a.view.Set(&view{hub: &registration.HubClients{Config: hubConfig, Client: hubClient, Kube: hub}, reader: hubClient})
	l := &credentialsLoop{a: a, states: map[regKey]*regState{}}
	return a, hubClient, func() time.Duration {
		t.Helper()
		next, err := l.step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
}

// TestCredentialsLoop runs the credentials loop against a fake hub and spoke: a registration
// gets a request, its certificate lands in the Secret with a kubeconfig, ClusterCertificateRotated
// is reported, the next request comes at 80% of the lifetime, and a removed registration loses
// its Secret.
func TestCredentialsLoop(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(epoch)
	hub := newFakeHub(t)
	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "scorer", Generation: 1},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: "scorer-ns"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{Registrations: []addonv1alpha1.RegistrationConfig{
			{SignerName: addonv1alpha1.KubeAPIServerClientSignerName},
		}},
	}
	spoke := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "scorer-ns"}})
	_, hubClient, step := credentialsLoopFor(t, clk, hub, spoke, mca)

	if next := step(); next != time.Second {
		t.Errorf("next round %s after filing a request, want the poll (1s)", next)
	}
	reqs := hub.requests(t)
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	got := []string{reqs[0].Spec.SignerName, reqs[0].Labels["open-cluster-management.io/cluster-name"], reqs[0].Labels["open-cluster-management.io/addon-name"]}
	if diff := cmp.Diff([]string{"kubernetes.io/kube-apiserver-client", "gpu-east", "scorer"}, got); diff != "" {
		t.Errorf("request signer and labels (-want +got):\n%s", diff)
	}

	// Signed: the Secret holds a kubeconfig for the hub with the certificate, and the add-on says so.
	hub.sign(t, reqs[0].Name, epoch, time.Hour)
	if next := step(); next != 48*time.Minute {
		t.Errorf("next round %s after storing a 1h certificate, want its renewal in 48m", next)
	}
	s, err := spoke.CoreV1().Secrets("scorer-ns").Get(ctx, "scorer-hub-kubeconfig", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	cert, err := registration.ParseCertificate(cfg.CertData)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://hub.test:6443", "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1"}, []string{cfg.Host, cert.Subject.CommonName}); diff != "" {
		t.Errorf("kubeconfig host and user (-want +got):\n%s", diff)
	}
	stored := &addonv1alpha1.ManagedClusterAddOn{}
	if err := hubClient.Get(ctx, ctrlclient.ObjectKeyFromObject(mca), stored); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(stored.Status.Conditions, ConditionClusterCertificateRotated); c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonClientCertificateUpdated {
		t.Errorf("ClusterCertificateRotated = %+v, want True %s", c, ReasonClientCertificateUpdated)
	}

	// Nothing to do before 80% of the lifetime; a new request at it, the old certificate kept meanwhile.
	clk.Step(47 * time.Minute)
	step()
	if n := len(hub.requests(t)); n != 1 {
		t.Errorf("%d requests before the renewal time, want 1", n)
	}
	clk.Step(time.Minute)
	step()
	if n := len(hub.requests(t)); n != 2 {
		t.Errorf("%d requests at the renewal time, want 2", n)
	}

	// The registration is removed: its Secret goes.
	if err := hubClient.Get(ctx, ctrlclient.ObjectKeyFromObject(mca), stored); err != nil {
		t.Fatal(err)
	}
	stored.Status.Registrations = nil
	if err := hubClient.Status().Update(ctx, stored); err != nil {
		t.Fatal(err)
	}
	step()
	if _, err := spoke.CoreV1().Secrets("scorer-ns").Get(ctx, "scorer-hub-kubeconfig", metav1.GetOptions{}); err == nil {
		t.Error("the Secret of a removed registration is still there")
	}
}
