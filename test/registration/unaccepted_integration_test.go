//go:build integration

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
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/clusteridentity"
	"github.com/flotilla/flotilla/internal/testenv"
)

// TestApprovedButNotAcceptedCanOnlyReadItsCluster plays an agent whose certificate request was
// approved while its cluster was not accepted: it holds a valid certificate, yet may do nothing
// but read its own ManagedCluster.
func TestApprovedButNotAcceptedCanOnlyReadItsCluster(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const cluster = "unaccepted"
	bc, err := client.New(bootstrapConfig(t, env), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := bc.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hubClient(t, env).Delete(context.Background(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}})
	})

	// The agent's request, approved by an administrator without accepting the cluster.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: clusteridentity.User(cluster, "a"), Organization: clusteridentity.Groups(cluster)},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved, not accepted",
	})
	if _, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var issued []byte
	testenv.WaitFor(t, 30*time.Second, "the hub's kube-controller-manager to sign the request", func(ctx context.Context) (bool, string, error) {
		got, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		issued = got.Status.Certificate
		return len(issued) > 0, fmt.Sprintf("conditions %v", got.Status.Conditions), nil
	})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(env.Hub.RESTConfig())
	cfg.CertData, cfg.KeyData = issued, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	ac, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	mc := &clusterv1.ManagedCluster{}
	testenv.WaitFor(t, 30*time.Second, "the hub to let the agent read its own ManagedCluster", func(ctx context.Context) (bool, string, error) {
		err := ac.Get(ctx, client.ObjectKey{Name: cluster}, mc)
		return err == nil, fmt.Sprintf("get: %v", err), nil
	})
	mc.Spec.HubAcceptsClient = true
	checks := map[string]error{
		"accept itself":               ac.Update(ctx, mc),
		"write its status":            ac.Status().Update(ctx, mc),
		"read another cluster":        ac.Get(ctx, client.ObjectKey{Name: "spoke-1"}, &clusterv1.ManagedCluster{}),
		"list works in its namespace": ac.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster)),
		"request a certificate": ac.Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-"},
			Spec:       csr.Spec,
		}),
	}
	for what, err := range checks {
		if !apierrors.IsForbidden(err) {
			t.Errorf("an unaccepted agent tried to %s: err = %v, want Forbidden", what, err)
		}
	}
}
