package addontemplate

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
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

// tamperedRequestPEM is a request signed for subject signed, whose subject was then rewritten in
// place to asked (the same length), so that it asks for asked with a signature that does not match.
func tamperedRequestPEM(t *testing.T, signed, asked pkix.Name) []byte {
	t.Helper()
	block, _ := pem.Decode(requestPEM(t, signed))
	from, to := []byte(signed.CommonName), []byte(asked.CommonName)
	if len(from) != len(to) || bytes.Count(block.Bytes, from) != 1 {
		t.Fatalf("cannot rewrite %q to %q in place", from, to)
	}
	block.Bytes = bytes.Replace(block.Bytes, from, to, 1)
	return pem.EncodeToMemory(block)
}

func TestCheckCustomRequest(t *testing.T) {
	const fixed, byDefault, noUser = "example.com/gpu", "example.com/gpu-default", "example.com/gpu-any-agent"
	custom := func(signer string, subject *addonv1alpha1.Subject) addonv1alpha1.RegistrationSpec {
		return addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeCustomSigner,
			CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: signer, Subject: subject}}
	}
	tmpl := templateOf([]addonv1alpha1.RegistrationSpec{kubeClient[0],
		custom(fixed, &addonv1alpha1.Subject{User: "metrics", Groups: []string{"b", "a"}, OrganizationUnits: []string{"ou-1"}}),
		custom(byDefault, nil),
		custom(noUser, &addonv1alpha1.Subject{Groups: []string{"g"}})})
	// The add-on of cluster spoke-1. Its agent may write its status: here it names spoke-2's
	// identities, which the hub must not take for spoke-1's.
	spoke2 := &addonv1alpha1.Subject{User: "system:open-cluster-management:cluster:spoke-2:addon:gpu:agent:gpu-agent",
		Groups: []string{"system:open-cluster-management:cluster:spoke-2:addon:gpu", "system:open-cluster-management:addon:gpu", "system:authenticated"}}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{Registrations: []addonv1alpha1.RegistrationConfig{
			{SignerName: fixed, Subject: &addonv1alpha1.Subject{User: "admin", Groups: []string{"system:masters"}}},
			{SignerName: byDefault, Subject: spoke2}, {SignerName: noUser, Subject: spoke2},
			{SignerName: "example.com/poisoned", Subject: spoke2}}}}
	registered := pkix.Name{CommonName: "metrics", Organization: []string{"a", "b"}, OrganizationalUnit: []string{"ou-1"}}
	spoke1Default := pkix.Name{CommonName: "system:open-cluster-management:cluster:spoke-1:addon:gpu:agent:gpu-agent",
		Organization: []string{"system:open-cluster-management:cluster:spoke-1:addon:gpu", "system:open-cluster-management:addon:gpu", "system:authenticated"}}
	spoke2Default := pkix.Name{CommonName: spoke2.User, Organization: spoke2.Groups}
	agentGroups := []string{"system:open-cluster-management:spoke-1", "system:open-cluster-management:managed-clusters", "system:authenticated"}
	// csr is spoke-1's agent asking signer for subject, edited.
	csr := func(signer string, subject pkix.Name, edit func(c *certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: signer, Username: "system:open-cluster-management:spoke-1:agent-1", Groups: agentGroups,
			Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			Request: requestPEM(t, subject)}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	withOU := func(n pkix.Name, ou ...string) pkix.Name { n.OrganizationalUnit = ou; return n }
	withGroups := func(n pkix.Name, g ...string) pkix.Name { n.Organization = g; return n }
	cases := map[string]struct {
		csr     *certificatesv1.CertificateSigningRequest
		wantErr string
	}{
		"the template's subject":         {csr: csr(fixed, registered, nil)},
		"the template's default subject": {csr: csr(byDefault, spoke1Default, nil)},
		"no user in the template: the add-on's user with the agent's own id": {
			csr: csr(noUser, pkix.Name{CommonName: "system:open-cluster-management:cluster:spoke-1:addon:gpu:agent:7f3a", Organization: []string{"g"}}, nil)},

		// Cluster A asks for cluster B's identity, which A's agent wrote into A's add-on status.
		"another cluster's default subject, registered in status by the agent": {csr: csr(byDefault, spoke2Default, nil),
			wantErr: `user (common name) "system:open-cluster-management:cluster:spoke-2:addon:gpu:agent:gpu-agent" is not "system:open-cluster-management:cluster:spoke-1:addon:gpu:agent:gpu-agent"`},
		"no user in the template: another cluster's add-on user": {
			csr:     csr(noUser, pkix.Name{CommonName: spoke2.User, Organization: []string{"g"}}, nil),
			wantErr: `user (common name) "system:open-cluster-management:cluster:spoke-2:addon:gpu:agent:gpu-agent" is not "system:open-cluster-management:cluster:spoke-1:addon:gpu:agent:<agent>"`},
		"the subject the agent wrote in status, not the template's": {
			csr:     csr(fixed, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, nil),
			wantErr: `user (common name) "admin" is not "metrics"`},
		"a signer only status registers": {csr: csr("example.com/poisoned", spoke2Default, nil),
			wantErr: `signer "example.com/poisoned" is not a custom signer of AddOnTemplate gpu-tmpl (spec.registration[].customSigner.signerName)`},
		"another cluster's agent": {csr: csr(fixed, registered, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "system:open-cluster-management:spoke-2:agent-1", []string{"system:open-cluster-management:spoke-2", "system:open-cluster-management:managed-clusters"}
		}), wantErr: `filed by "system:open-cluster-management:spoke-2:agent-1" in groups [system:open-cluster-management:spoke-2 system:open-cluster-management:managed-clusters], not by an agent of cluster spoke-1`},
		"an agent's user name without the cluster's group": {csr: csr(fixed, registered, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Groups = []string{"system:open-cluster-management:managed-clusters"}
		}), wantErr: `filed by "system:open-cluster-management:spoke-1:agent-1" in groups [system:open-cluster-management:managed-clusters], not by an agent of cluster spoke-1`},

		// Not a client certificate of a custom signer.
		"the kube-apiserver client signer, for the kubeClient registration's subject": {csr: csr("kubernetes.io/kube-apiserver-client", spoke1Default, nil),
			wantErr: `signer "kubernetes.io/kube-apiserver-client" is not a custom signer of AddOnTemplate gpu-tmpl (spec.registration[].customSigner.signerName)`},
		"a signer the template does not register": {csr: csr("example.com/other", registered, nil),
			wantErr: `signer "example.com/other" is not a custom signer of AddOnTemplate gpu-tmpl (spec.registration[].customSigner.signerName)`},
		"server usage": {csr: csr(fixed, registered, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageServerAuth)
		}), wantErr: `usage "server auth" is not one of [digital signature key encipherment client auth]`},
		"no client auth usage": {csr: csr(fixed, registered, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
		}), wantErr: `usages [digital signature] lack "client auth"`},

		// The request itself.
		"a signature that does not match the subject": {csr: csr(fixed, registered, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = tamperedRequestPEM(t, pkix.Name{CommonName: "metricz", Organization: []string{"a", "b"}, OrganizationalUnit: []string{"ou-1"}}, registered)
		}), wantErr: "the request's signature: x509: ECDSA verification failure"},
		"not PEM": {csr: csr(fixed, registered, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("metrics") }),
			wantErr: "the request is not a PEM certificate request"},
		"another organizational unit": {csr: csr(fixed, withOU(registered, "ou-2"), nil),
			wantErr: `organizational units ["ou-2"] are not the registered ["ou-1"]`},
		"an organizational unit more": {csr: csr(fixed, withOU(registered, "ou-1", "admins"), nil),
			wantErr: `organizational units ["ou-1" "admins"] are not the registered ["ou-1"]`},
		"no organizational unit": {csr: csr(fixed, withOU(registered), nil),
			wantErr: `organizational units [] are not the registered ["ou-1"]`},
		"a group more": {csr: csr(fixed, withGroups(registered, "a", "b", "system:masters"), nil),
			wantErr: `groups (organizations) ["a" "b" "system:masters"] are not the registered ["b" "a"]`},
		"another cluster's groups with this cluster's user": {csr: csr(byDefault, withGroups(spoke1Default, spoke2.Groups...), nil),
			wantErr: `groups (organizations) ["system:authenticated" "system:open-cluster-management:addon:gpu" "system:open-cluster-management:cluster:spoke-2:addon:gpu"] are not the registered ["system:open-cluster-management:cluster:spoke-1:addon:gpu" "system:open-cluster-management:addon:gpu" "system:authenticated"]`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := checkCustomRequest(tc.csr, mca, tmpl)
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
	caPEM, caKeyPEM := testCA(t, now)
	block, _ := pem.Decode(requestPEM(t, pkix.Name{CommonName: "metrics", Organization: []string{"a"}}))
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sign(req, caPEM, caKeyPEM, now)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := pem.Decode(out)
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caBlock, _ := pem.Decode(caPEM)
	ca, _ := x509.ParseCertificate(caBlock.Bytes)
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
