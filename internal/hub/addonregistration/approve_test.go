package addonregistration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/clusteridentity"
)

// csrFor is a request for subject filed by user in groups.
func csrFor(t *testing.T, subject pkix.Name, user string, groups ...string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "addon-gpu-east-scorer-1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			Username:   user,
			Groups:     groups,
		},
	}
}

func addOnSubject(cluster, addon string) pkix.Name {
	return pkix.Name{CommonName: clusteridentity.AddOnUser(cluster, addon, "a1"), Organization: clusteridentity.AddOnGroups(cluster, addon)}
}

func agentOf(cluster string) (string, []string) {
	return clusteridentity.User(cluster, "agent-1"), append(clusteridentity.Groups(cluster), "system:authenticated")
}

func TestAddOnRequest(t *testing.T) {
	eastUser, eastGroups := agentOf("gpu-east")
	cases := map[string]struct {
		csr     func() *certificatesv1.CertificateSigningRequest
		wantErr string
	}{
		"the cluster's agent for its add-on": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, addOnSubject("gpu-east", "scorer"), eastUser, eastGroups...)
			},
		},
		"another cluster's add-on": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, addOnSubject("gpu-west", "scorer"), eastUser, eastGroups...)
			},
			wantErr: `filed by "system:open-cluster-management:gpu-east:agent-1" in groups [system:open-cluster-management:gpu-east system:open-cluster-management:managed-clusters system:authenticated], not by an agent of cluster gpu-west`,
		},
		"an add-on identity asking for itself": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := addOnSubject("gpu-east", "scorer")
				return csrFor(t, s, s.CommonName, s.Organization...)
			},
			wantErr: "not by an agent of cluster gpu-east",
		},
		"an agent's user name without its groups": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, addOnSubject("gpu-east", "scorer"), eastUser, "system:authenticated")
			},
			wantErr: "not by an agent of cluster gpu-east",
		},
		"system:masters added": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := addOnSubject("gpu-east", "scorer")
				s.Organization = append(s.Organization, "system:masters")
				return csrFor(t, s, eastUser, eastGroups...)
			},
			wantErr: "are not the add-on groups",
		},
		"another signer": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, addOnSubject("gpu-east", "scorer"), eastUser, eastGroups...)
				c.Spec.SignerName = "example.com/scorer"
				return c
			},
			wantErr: `signer "example.com/scorer" is not kubernetes.io/kube-apiserver-client`,
		},
		"server usage": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, addOnSubject("gpu-east", "scorer"), eastUser, eastGroups...)
				c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageServerAuth)
				return c
			},
			wantErr: `usage "server auth" is not one of a client certificate's`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := addOnRequest(tc.csr())
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Errorf("addOnRequest error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	accepted := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	mca := func(regs ...addonv1alpha1.RegistrationConfig) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "scorer"},
			Status:     addonv1alpha1.ManagedClusterAddOnStatus{Registrations: regs},
		}
	}
	kubeClient := addonv1alpha1.RegistrationConfig{SignerName: certificatesv1.KubeAPIServerClientSignerName}
	req := &clusteridentity.AddOnRequest{Cluster: "gpu-east", AddOn: "scorer", Agent: "a1", Subject: addOnSubject("gpu-east", "scorer")}
	cases := map[string]struct {
		mc      *clusterv1.ManagedCluster
		mca     *addonv1alpha1.ManagedClusterAddOn
		wantErr string
	}{
		"registered":           {mc: accepted, mca: mca(kubeClient)},
		"no cluster":           {mca: mca(kubeClient), wantErr: "cluster gpu-east does not exist"},
		"cluster not accepted": {mc: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}}, mca: mca(kubeClient), wantErr: "cluster gpu-east is not accepted"},
		"no add-on":            {mc: accepted, wantErr: "no ManagedClusterAddOn gpu-east/scorer"},
		"no registration": {
			mc: accepted, mca: mca(addonv1alpha1.RegistrationConfig{SignerName: "example.com/scorer"}),
			wantErr: "ManagedClusterAddOn gpu-east/scorer registers no kubernetes.io/kube-apiserver-client signer in status.registrations",
		},
		"registered subject equal": {
			mc: accepted, mca: mca(addonv1alpha1.RegistrationConfig{SignerName: certificatesv1.KubeAPIServerClientSignerName, Subject: &addonv1alpha1.Subject{
				User: req.Subject.CommonName, Groups: req.Subject.Organization,
			}}),
		},
		"registered for another agent": {
			mc: accepted, mca: mca(addonv1alpha1.RegistrationConfig{SignerName: certificatesv1.KubeAPIServerClientSignerName, Subject: &addonv1alpha1.Subject{
				User: clusteridentity.AddOnUser("gpu-east", "scorer", "other"),
			}}),
			wantErr: `ManagedClusterAddOn gpu-east/scorer registers user "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:other"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := registered(req, tc.mc, tc.mca)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Errorf("registered error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}
