//go:build integration

package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// request is a certificate request for an agent identity, before it is filed.
type request struct {
	cluster, agentID string
	// label is the cluster named by the request's label; the cluster itself when empty.
	label  string
	signer string // kube-apiserver-client when empty
}

// file files r with cs (whose identity becomes the requester) and returns the request and the
// private key it was made with.
func (r request) file(t *testing.T, cs kubernetes.Interface) (*certificatesv1.CertificateSigningRequest, *ecdsa.PrivateKey) {
	t.Helper()
	requestPEM, key, err := clusteridentity.NewRequest(r.cluster, r.agentID)
	if err != nil {
		t.Fatal(err)
	}
	label, signer := r.label, r.signer
	if label == "" {
		label = r.cluster
	}
	if signer == "" {
		signer = certificatesv1.KubeAPIServerClientSignerName
	}
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Create(context.Background(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: label + "-", Labels: map[string]string{clusteridentity.ClusterNameLabel: label}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    requestPEM,
			SignerName: signer,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("filing a certificate request for %s: %v", clusteridentity.User(r.cluster, r.agentID), err)
	}
	return csr, key
}

// agentIdentity gives the test an agent's credentials for cluster the way an administrator could
// mint them: a request filed and approved with the admin's rights, signed by the hub's
// kube-controller-manager. What the identity may do is then up to the hub's RBAC alone.
func agentIdentity(t *testing.T, env *testenv.Env, cluster, agentID string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	csr, key := request{cluster: cluster, agentID: agentID}.file(t, env.Hub.Client)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the test",
	})
	if _, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	issued := waitIssued(t, env.Hub.Client, csr.Name)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(env.Hub.RESTConfig())
	cfg.CertData, cfg.KeyData = issued, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return cfg
}

// waitIssued waits for the hub's kube-controller-manager to sign an approved request.
func waitIssued(t *testing.T, cs kubernetes.Interface, name string) []byte {
	t.Helper()
	var issued []byte
	testenv.WaitFor(t, 30*time.Second, "the hub's kube-controller-manager to sign request "+name, func(ctx context.Context) (bool, string, error) {
		got, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		issued = got.Status.Certificate
		return len(issued) > 0, fmt.Sprintf("conditions %v", got.Status.Conditions), nil
	})
	return issued
}

// approved reports whether the request named name is approved.
func approved(t *testing.T, cs kubernetes.Interface, name string) bool {
	t.Helper()
	got, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}
