//go:build integration

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

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/config/rbac"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// newCA makes a self-signed CA: its certificate and PKCS#8 key, in PEM.
func newCA(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "metrics-ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour * 30)}
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

// newRequest is a PEM certificate request for subject.
func newRequest(t *testing.T, subject pkix.Name) []byte {
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

// hubSubjects are the hub's identities: the subjects bound to its generated ClusterRole.
func hubSubjects(t *testing.T, c client.Client) []rbacv1.Subject {
	t.Helper()
	crbs := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(context.Background(), crbs); err != nil {
		t.Fatal(err)
	}
	var subjects []rbacv1.Subject
	for _, b := range crbs.Items {
		if b.RoleRef.Kind == "ClusterRole" && b.RoleRef.Name == rbac.Name {
			subjects = append(subjects, b.Subjects...)
		}
	}
	if len(subjects) == 0 {
		t.Fatalf("no subjects bound to ClusterRole %s", rbac.Name)
	}
	return subjects
}

// grantHub gives the hub's identities the rules, as an administrator does for what the hub's
// own roles leave out (a role to bind, a custom signer).
func grantHub(t *testing.T, c client.Client, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	testenv.Create(t, c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules})
	testenv.Create(t, c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: hubSubjects(t, c)})
}

// grantSigner gives the hub what whoever sets up a custom signer grants: approve and sign on
// that signer, and get on its CA Secret.
func grantSigner(t *testing.T, c client.Client, signer, ns, secret string) {
	t.Helper()
	grantHub(t, c, "metrics-signer",
		rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{signer}, Verbs: []string{"approve", "sign"}})
	testenv.Create(t, c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "metrics-ca-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secret}, Verbs: []string{"get"}}}})
	testenv.Create(t, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "metrics-ca-reader"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "metrics-ca-reader"}, Subjects: hubSubjects(t, c)})
}
