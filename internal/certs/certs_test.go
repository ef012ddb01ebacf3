package certs

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"testing"
	"time"
)

func TestIssuedCertificateVerifiesAgainstTheCA(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ca, err := NewCA("test-ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: "server"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("issued certificate and key do not pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1", CurrentTime: now}); err != nil {
		t.Errorf("issued certificate does not verify against its CA: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now.Add(2 * time.Hour)}); err == nil {
		t.Errorf("certificate still valid after its lifetime")
	}
}

// TestParseCA: a CA written as PEM reads back as itself; a key of another CA, a leaf certificate
// or garbage is refused.
func TestParseCA(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ca, err := NewCA("a", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA("b", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	keyA, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	keyB, err := other.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	leaf, leafKey, err := ca.Issue(x509.Certificate{Subject: pkix.Name{CommonName: "leaf"}}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		cert, key []byte
		wantErr   bool
	}{
		"round trip":       {cert: ca.CertPEM(), key: keyA},
		"another CA's key": {cert: ca.CertPEM(), key: keyB, wantErr: true},
		"a leaf":           {cert: leaf, key: leafKey, wantErr: true},
		"not PEM":          {cert: []byte("x"), key: keyA, wantErr: true},
		"key not PEM":      {cert: ca.CertPEM(), key: []byte("x"), wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCA(tc.cert, tc.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %t", err, tc.wantErr)
			}
			if err == nil && !got.Cert.Equal(ca.Cert) {
				t.Errorf("read back a different certificate")
			}
		})
	}
}
