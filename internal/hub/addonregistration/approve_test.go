package addonregistration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
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
		"no client auth usage": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, addOnSubject("gpu-east", "scorer"), eastUser, eastGroups...)
				c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
				return c
			},
			wantErr: `usages [digital signature] lack "client auth"`,
		},
		"an organizational unit": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := addOnSubject("gpu-east", "scorer")
				s.OrganizationalUnit = []string{"admins"}
				return csrFor(t, s, eastUser, eastGroups...)
			},
			wantErr: "organizational units [admins]: an add-on agent's certificate has none",
		},
		"another cluster's user with this cluster's groups": {
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := addOnSubject("gpu-east", "scorer")
				s.CommonName = clusteridentity.AddOnUser("gpu-west", "scorer", "a1")
				return csrFor(t, s, eastUser, eastGroups...)
			},
			wantErr: "are not the add-on groups",
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
	gone := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	deleting := accepted.DeepCopy()
	deleting.DeletionTimestamp, deleting.Finalizers = &gone, []string{"f"}
	mca := func(regs ...addonv1alpha1.RegistrationConfig) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "scorer"},
			Status:     addonv1alpha1.ManagedClusterAddOnStatus{Registrations: regs},
		}
	}
	deletingMCA := mca(kubeClientFor(nil))
	deletingMCA.DeletionTimestamp, deletingMCA.Finalizers = &gone, []string{"f"}
	// The request asks for the add-on's default identity on gpu-east (agent a1).
	req := &clusteridentity.AddOnRequest{Cluster: "gpu-east", AddOn: "scorer", Agent: "a1", Subject: addOnSubject("gpu-east", "scorer")}
	withGroups := func(groups ...string) *clusteridentity.AddOnRequest {
		r := *req
		r.Subject.Organization = groups
		return &r
	}
	east, west := clusteridentity.AddOnGroups("gpu-east", "scorer"), clusteridentity.AddOnGroups("gpu-west", "scorer")
	cases := map[string]struct {
		req     *clusteridentity.AddOnRequest
		mc      *clusterv1.ManagedCluster
		mca     *addonv1alpha1.ManagedClusterAddOn
		wantErr string
	}{
		"registered, no subject":      {mc: accepted, mca: mca(kubeClientFor(nil))},
		"registered subject equal":    {mc: accepted, mca: mca(kubeClientFor(&addonv1alpha1.Subject{User: req.Subject.CommonName, Groups: east}))},
		"registered groups reordered": {mc: accepted, mca: mca(kubeClientFor(&addonv1alpha1.Subject{Groups: []string{east[2], east[0], east[1]}}))},
		"registered user, no groups":  {mc: accepted, mca: mca(kubeClientFor(&addonv1alpha1.Subject{User: req.Subject.CommonName}))},
		"no cluster":                  {mca: mca(kubeClientFor(nil)), wantErr: "cluster gpu-east does not exist"},
		"cluster not accepted":        {mc: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}}, mca: mca(kubeClientFor(nil)), wantErr: "cluster gpu-east is not accepted"},
		"cluster being deleted":       {mc: deleting, mca: mca(kubeClientFor(nil)), wantErr: "cluster gpu-east is not accepted"},
		"no add-on":                   {mc: accepted, wantErr: "no ManagedClusterAddOn gpu-east/scorer"},
		"add-on being deleted":        {mc: accepted, mca: deletingMCA, wantErr: "ManagedClusterAddOn gpu-east/scorer is being deleted"},
		"no kube-apiserver-client registration": {
			mc: accepted, mca: mca(addonv1alpha1.RegistrationConfig{SignerName: "example.com/scorer"}),
			wantErr: "ManagedClusterAddOn gpu-east/scorer registers no kubernetes.io/kube-apiserver-client signer in status.registrations",
		},
		"the request's subject registered for another signer only": {
			mc: accepted, mca: mca(addonv1alpha1.RegistrationConfig{SignerName: "example.com/scorer", Subject: &addonv1alpha1.Subject{User: req.Subject.CommonName, Groups: east}}),
			wantErr: "ManagedClusterAddOn gpu-east/scorer registers no kubernetes.io/kube-apiserver-client signer in status.registrations",
		},
		"registered for another agent": {
			mc: accepted, mca: mca(kubeClientFor(&addonv1alpha1.Subject{User: clusteridentity.AddOnUser("gpu-east", "scorer", "other")})),
			wantErr: `ManagedClusterAddOn gpu-east/scorer registers user "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:other", ` +
				`the request asks for "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1"`,
		},
		"registered groups differ": {
			mc: accepted, mca: mca(kubeClientFor(&addonv1alpha1.Subject{User: req.Subject.CommonName, Groups: west})),
			wantErr: "ManagedClusterAddOn gpu-east/scorer registers groups [system:open-cluster-management:cluster:gpu-west:addon:scorer system:open-cluster-management:addon:scorer system:authenticated], " +
				"the request asks for [system:open-cluster-management:cluster:gpu-east:addon:scorer system:open-cluster-management:addon:scorer system:authenticated]",
		},
		"registered groups, one fewer in the request": {
			req: withGroups(east[0], east[1]), mc: accepted, mca: mca(kubeClientFor(&addonv1alpha1.Subject{Groups: east})),
			wantErr: "ManagedClusterAddOn gpu-east/scorer registers groups [system:open-cluster-management:cluster:gpu-east:addon:scorer system:open-cluster-management:addon:scorer system:authenticated], " +
				"the request asks for [system:open-cluster-management:cluster:gpu-east:addon:scorer system:open-cluster-management:addon:scorer]",
		},
		"registered groups, one more in the request": {
			req: withGroups(append(slices.Clone(east), "system:masters")...), mc: accepted, mca: mca(kubeClientFor(&addonv1alpha1.Subject{Groups: east})),
			wantErr: "ManagedClusterAddOn gpu-east/scorer registers groups [system:open-cluster-management:cluster:gpu-east:addon:scorer system:open-cluster-management:addon:scorer system:authenticated], " +
				"the request asks for [system:open-cluster-management:cluster:gpu-east:addon:scorer system:open-cluster-management:addon:scorer system:authenticated system:masters]",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := req
			if tc.req != nil {
				r = tc.req
			}
			err := registered(r, tc.mc, tc.mca)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("registered error (-want +got):\n%s", diff)
			}
		})
	}
}

// kubeClientFor is a kube-apiserver-client registration for subject.
func kubeClientFor(subject *addonv1alpha1.Subject) addonv1alpha1.RegistrationConfig {
	return addonv1alpha1.RegistrationConfig{SignerName: certificatesv1.KubeAPIServerClientSignerName, Subject: subject}
}
