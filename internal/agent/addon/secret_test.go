package addon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

var epoch = time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)

// issue returns a certificate for subject valid from epoch for life, and its key, PEM-encoded.
func issue(t *testing.T, subject pkix.Name, life time.Duration) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: subject, NotBefore: epoch, NotAfter: epoch.Add(life),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func TestSecretData(t *testing.T) {
	subject := Subject("gpu-east", "scorer", "a1", addonv1alpha1.RegistrationConfig{SignerName: addonv1alpha1.KubeAPIServerClientSignerName})
	certPEM, keyPEM := issue(t, subject, time.Hour)
	hub := hubEndpoint{Host: "https://hub.example:6443", CA: []byte("hub CA")}

	kube, err := secretData(addonv1alpha1.KubeAPIServerClientSignerName, "gpu-east", hub, certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := secretData("example.com/scorer", "gpu-east", hub, certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }
	if diff := cmp.Diff([]string{"cluster-name", "kubeconfig", "tls.crt", "tls.key"}, keys(kube)); diff != "" {
		t.Errorf("keys of a kube-apiserver client Secret (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cluster-name", "tls.crt", "tls.key"}, keys(custom)); diff != "" {
		t.Errorf("keys of a custom signer's Secret (-want +got):\n%s", diff)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kube[KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.Host, string(cfg.CAData), string(cfg.CertData), string(cfg.KeyData), string(kube[ClusterNameKey]), string(kube[TLSCertKey]), string(kube[TLSKeyKey])}
	want := []string{hub.Host, "hub CA", string(certPEM), string(keyPEM), "gpu-east", string(certPEM), string(keyPEM)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubeconfig host, CA, cert, key; cluster-name, tls.crt, tls.key (-want +got):\n%s", diff)
	}
}

func TestWithData(t *testing.T) {
	have := map[string][]byte{"tls.crt": []byte("old"), "extra": []byte("kept")}
	got, changed := withData(have, map[string][]byte{"tls.crt": []byte("new"), "tls.key": []byte("k")})
	want := map[string][]byte{"tls.crt": []byte("new"), "tls.key": []byte("k"), "extra": []byte("kept")}
	if diff := cmp.Diff(want, got); diff != "" || !changed {
		t.Errorf("withData (-want +got):\n%s changed=%v", diff, changed)
	}
	if _, changed := withData(want, map[string][]byte{"tls.key": []byte("k")}); changed {
		t.Error("withData reports a change for data already there")
	}
	if string(have["tls.crt"]) != "old" {
		t.Error("withData changed its input")
	}
}

func TestUsableCertificate(t *testing.T) {
	subject := Subject("gpu-east", "scorer", "a1", addonv1alpha1.RegistrationConfig{SignerName: addonv1alpha1.KubeAPIServerClientSignerName})
	certPEM, keyPEM := issue(t, subject, time.Hour)
	_, otherKey := issue(t, subject, time.Hour)
	west := Subject("gpu-west", "scorer", "a1", addonv1alpha1.RegistrationConfig{SignerName: addonv1alpha1.KubeAPIServerClientSignerName})
	reordered := subject
	reordered.Organization = []string{subject.Organization[2], subject.Organization[1], subject.Organization[0]}
	cases := map[string]struct {
		data    map[string][]byte
		subject pkix.Name
		at      time.Duration
		wantWhy string // "" when usable
	}{
		"usable":                  {data: map[string][]byte{TLSCertKey: certPEM, TLSKeyKey: keyPEM}, subject: subject, at: 30 * time.Minute},
		"groups in another order": {data: map[string][]byte{TLSCertKey: certPEM, TLSKeyKey: keyPEM}, subject: reordered},
		"no certificate":          {data: map[string][]byte{}, subject: subject, wantWhy: "no certificate yet"},
		"garbage":                 {data: map[string][]byte{TLSCertKey: []byte("x"), TLSKeyKey: keyPEM}, subject: subject, wantWhy: "the stored certificate does not parse"},
		"another key":             {data: map[string][]byte{TLSCertKey: certPEM, TLSKeyKey: otherKey}, subject: subject, wantWhy: "the stored key does not match the certificate"},
		"another subject":         {data: map[string][]byte{TLSCertKey: certPEM, TLSKeyKey: keyPEM}, subject: west, wantWhy: "the registration asks for \"system:open-cluster-management:cluster:gpu-west:addon:scorer:agent:a1\""},
		"expired":                 {data: map[string][]byte{TLSCertKey: certPEM, TLSKeyKey: keyPEM}, subject: subject, at: time.Hour, wantWhy: "the stored certificate expired at 2026-12-01T03:00:00Z"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cert, why := usableCertificate(tc.data, tc.subject, epoch.Add(tc.at))
			if tc.wantWhy == "" {
				if cert == nil || why != "" {
					t.Fatalf("usableCertificate = nil, %q; want the certificate", why)
				}
				return
			}
			if cert != nil || !strings.Contains(why, tc.wantWhy) {
				t.Errorf("usableCertificate = %v, %q; want nil and a reason containing %q", cert != nil, why, tc.wantWhy)
			}
		})
	}
}
