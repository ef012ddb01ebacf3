package flower

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"testing"
)

func parseLeaf(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func x509Pool(data string) (*x509.CertPool, error) {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM([]byte(data)) {
		return nil, fmt.Errorf("no certificate")
	}
	return p, nil
}
