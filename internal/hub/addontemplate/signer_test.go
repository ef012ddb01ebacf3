package addontemplate

import (
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

func requestPEM(t *testing.T, subject pkix.Name) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestCheckCustomRequest(t *testing.T) {
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{Registrations: []addonv1alpha1.RegistrationConfig{
			{SignerName: "example.com/gpu", Subject: &addonv1alpha1.Subject{User: "metrics", Groups: []string{"b", "a"}}}}}}
	agentGroups := []string{"system:open-cluster-management:spoke-1", "system:open-cluster-management:managed-clusters"}
	good := func(edit func(c *certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "example.com/gpu", Username: "system:open-cluster-management:spoke-1:agent-1", Groups: agentGroups,
			Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			Request: requestPEM(t, pkix.Name{CommonName: "metrics", Organization: []string{"a", "b"}})}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	cases := map[string]struct {
		csr     *certificatesv1.CertificateSigningRequest
		wantErr string
	}{
		"registered subject": {csr: good(nil)},
		"another cluster's agent": {csr: good(func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "system:open-cluster-management:spoke-2:agent-1", []string{"system:open-cluster-management:spoke-2", "system:open-cluster-management:managed-clusters"}
		}), wantErr: `filed by "system:open-cluster-management:spoke-2:agent-1" in groups [system:open-cluster-management:spoke-2 system:open-cluster-management:managed-clusters], not by an agent of cluster spoke-1`},
		"server usage": {csr: good(func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageServerAuth)
		}),
			wantErr: `usage "server auth" is not one of [digital signature key encipherment client auth]`},
		"other subject": {csr: good(func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = requestPEM(t, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}})
		}), wantErr: `subject CN=admin,O=system:masters is not the registered {User:metrics Groups:[b a] OrganizationUnits:[]}`},
		"unregistered signer": {csr: good(func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com/other" }),
			wantErr: "ManagedClusterAddOn spoke-1/gpu registers no signer example.com/other"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := checkCustomRequest(tc.csr, mca)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSign(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpu-ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(requestPEM(t, pkix.Name{CommonName: "metrics", Organization: []string{"a"}}))
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sign(req, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), now)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := pem.Decode(out)
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Errorf("not signed by the CA: %v", err)
	}
	type summary struct {
		Subject  string
		NotAfter time.Time
		ExtUsage []x509.ExtKeyUsage
	}
	want := summary{"CN=metrics,O=a", now.Add(24 * time.Hour), []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if diff := cmp.Diff(want, summary{cert.Subject.String(), cert.NotAfter, cert.ExtKeyUsage}); diff != "" {
		t.Errorf("certificate (-want +got):\n%s", diff)
	}
}
