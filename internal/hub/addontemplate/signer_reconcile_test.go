package addontemplate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// testCA is a self-signed CA valid around now: its certificate and PKCS#8 key in PEM.
func testCA(t *testing.T, now time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpu-ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k})
}

// TestSignerReconcile runs the signer on requests of spoke-1's agent after that agent wrote
// spoke-2's identity into its add-on's status.registrations: the request for spoke-2's identity
// is neither approved nor signed; the one for spoke-1's own is both.
func TestSignerReconcile(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const signer = "example.com/gpu"
	caPEM, caKeyPEM := testCA(t, now)
	tmpl := templateOf([]addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeCustomSigner,
		CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: signer,
			SigningCA: addonv1alpha1.SigningCARef{Namespace: "gpu-system", Name: "gpu-ca"}}}})
	spoke2 := Registrations("spoke-2", "gpu", tmpl)[0].Subject
	own := Registrations("spoke-1", "gpu", tmpl)[0].Subject
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{
			ConfigReferences: []addonv1alpha1.ConfigReference{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addontemplates"},
				DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: tmpl.Name}, SpecHash: "h1"}}},
			Registrations: []addonv1alpha1.RegistrationConfig{{SignerName: signer, Subject: spoke2}}}}
	csr := func(name string, s *addonv1alpha1.Subject) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusteridentity.ClusterNameLabel: "spoke-1", clusteridentity.AddOnNameLabel: "gpu"}},
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer,
				Username: clusteridentity.User("spoke-1", "agent-1"), Groups: clusteridentity.Groups("spoke-1"),
				Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
				Request: requestPEM(t, pkix.Name{CommonName: s.User, Organization: s.Groups})}}
	}
	stolen, mine := csr("stolen", spoke2), csr("mine", own)
	cma := managingAddOn("gpu", tmpl.Name)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-system", Name: "gpu-ca"},
		Data: map[string][]byte{corev1.TLSCertKey: caPEM, corev1.TLSPrivateKeyKey: caKeyPEM}}
	certs := kubefake.NewClientset(stolen.DeepCopy(), mine.DeepCopy())
	s := &SignerReconciler{
		Client:       fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cma, mca, tmpl, stolen, mine).Build(),
		Reader:       fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(secret).Build(),
		Certificates: certs, Clock: clocktesting.NewFakePassiveClock(now),
	}
	type outcome struct {
		Approved, Signed bool
		CommonName       string
	}
	got := map[string]outcome{}
	for _, name := range []string{"stolen", "mine"} {
		if _, err := s.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
			t.Fatalf("reconciling %s: %v", name, err)
		}
		c, err := certs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o := outcome{Approved: len(c.Status.Conditions) > 0 && c.Status.Conditions[0].Type == certificatesv1.CertificateApproved, Signed: len(c.Status.Certificate) > 0}
		if b, _ := pem.Decode(c.Status.Certificate); b != nil {
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			o.CommonName = cert.Subject.CommonName
		}
		got[name] = o
	}
	want := map[string]outcome{"stolen": {}, "mine": {Approved: true, Signed: true, CommonName: own.User}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
