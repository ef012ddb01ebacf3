package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// makeCluster is a cluster whose UID is its name and "-uid".
func makeCluster(name string) *apitest.ClusterWrapper {
	return apitest.MakeCluster(name).UID(types.UID(name + "-uid"))
}

// ownerRef is the controller reference the hub puts on what it makes for mc.
func ownerRef(mc *clusterv1.ManagedCluster) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedCluster", Name: mc.Name, UID: mc.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}}
}

func namespace(name string, owners ...metav1.OwnerReference) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}
}

// csrWrapper builds test CertificateSigningRequests.
type csrWrapper struct {
	certificatesv1.CertificateSigningRequest
}

// makeCSR is a request filed by requester for the identity of agent agentID of cluster, made at t0
// plus age.
func makeCSR(t *testing.T, name, cluster, agentID, requester string, age time.Duration) *csrWrapper {
	t.Helper()
	w := &csrWrapper{certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, CreationTimestamp: metav1.NewTime(t0.Add(age)),
			Labels: map[string]string{clusteridentity.ClusterNameLabel: cluster},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			Username:   requester,
		},
	}}
	return w.request(t, clusteridentity.User(cluster, agentID), clusteridentity.Groups(cluster), nil)
}

// request replaces the PEM request with one for common name cn, organizations orgs and DNS names.
func (w *csrWrapper) request(t *testing.T, cn string, orgs, dnsNames []string) *csrWrapper {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dnsNames,
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	w.Spec.Request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	return w
}

func (w *csrWrapper) signer(name string) *csrWrapper {
	w.Spec.SignerName = name
	return w
}

func (w *csrWrapper) usages(u ...certificatesv1.KeyUsage) *csrWrapper {
	w.Spec.Usages = u
	return w
}

func (w *csrWrapper) condition(t certificatesv1.RequestConditionType) *csrWrapper {
	w.Status.Conditions = append(w.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue})
	return w
}

func (w *csrWrapper) obj() *certificatesv1.CertificateSigningRequest { return w.DeepCopy() }
