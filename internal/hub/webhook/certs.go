package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"time"

	"github.com/flotilla/flotilla/internal/certs"
)

// certLifetime is long because nothing renews the certificates: they are made again at every
// start, and their keys never leave the hub's memory.
const certLifetime = 10 * 365 * 24 * time.Hour

// selfSigned makes a certificate authority and a serving certificate it signs for the loopback
// addresses, localhost and hosts (IP addresses or DNS names). It returns the serving pair and the
// authority's certificate in PEM, for the webhook configuration's caBundle.
func selfSigned(now time.Time, hosts ...string) (serving tls.Certificate, caPEM []byte, err error) {
	ca, err := certs.NewCA("flotilla-hub-webhook-ca", now, certLifetime)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := x509.Certificate{
		Subject:     pkix.Name{CommonName: "flotilla-hub-webhook"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	certPEM, keyPEM, err := ca.Issue(tmpl, now, certLifetime)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serving, err = tls.X509KeyPair(certPEM, keyPEM)
	return serving, ca.CertPEM(), err
}
