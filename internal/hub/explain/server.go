package explain

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla/flotilla/internal/certs"
)

// Files a certificate directory holds: the serving pair.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// Options says where the server listens and with which certificate.
type Options struct {
	// Address is the host:port to listen on; port 0 picks a free one.
	Address string
	// CertDir holds CertFile and KeyFile, reloaded when they change. When empty, the hub makes a
	// self-signed authority and a certificate for the loopback addresses, localhost and the
	// listening host at every start; clients then cannot verify it (curl -k), so give a
	// CertDir to serve anyone but yourself.
	CertDir string
	// Clock dates the certificate the hub makes and is the scheduler's clock; nil is the real clock.
	Clock clock.PassiveClock
}

// Server is the HTTPS server, a manager Runnable that every replica runs (no leader needed: it
// only reads).
type Server struct {
	handler http.Handler
	opts    Options
	// synced waits for the manager's cache, so that no answer comes from a half-filled cache.
	synced func(context.Context) bool
}

var _ manager.LeaderElectionRunnable = (*Server)(nil)

// Setup adds the server to mgr; cs makes the TokenReviews and SubjectAccessReviews.
func Setup(mgr manager.Manager, cs kubernetes.Interface, opts Options) error {
	if _, _, err := net.SplitHostPort(opts.Address); err != nil {
		return fmt.Errorf("explain address %q: %w; give host:port, such as 127.0.0.1:9444", opts.Address, err)
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	h := &Handler{Reader: mgr.GetClient(), Authenticate: TokenReviews(cs), Authorize: SubjectAccessReviews(cs), Clock: opts.Clock}
	return mgr.Add(&Server{handler: h, opts: opts, synced: mgr.GetCache().WaitForCacheSync})
}

// NeedLeaderElection is false: every replica answers.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("explain")
	cfg, err := ServingTLS(ctx, s.opts.CertDir, s.opts.Address, s.opts.Clock.Now())
	if err != nil {
		return err
	}
	if !s.synced(ctx) {
		return ctx.Err()
	}
	l, err := tls.Listen("tcp", s.opts.Address, cfg)
	if err != nil {
		return fmt.Errorf("explain server: %w", err)
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return log.IntoContext(context.Background(), logger) },
	}
	logger.Info("serving placement explanations", "address", l.Addr().String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}

// ServingTLS is the TLS configuration of an HTTPS server of the hub's on address: the
// certificate in certDir (tls.crt, tls.key), reloaded when it changes, or, when certDir is empty,
// one made now for the loopback addresses, localhost and address's host. The explanation server
// and the dashboard use it.
func ServingTLS(ctx context.Context, certDir, address string, now time.Time) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if certDir == "" {
		host, _, _ := net.SplitHostPort(address)
		cert, err := selfSigned(now, host)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
		return cfg, nil
	}
	w, err := certwatcher.New(filepath.Join(certDir, CertFile), filepath.Join(certDir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("serving certificate in %s: %w", certDir, err)
	}
	go func() {
		if err := w.Start(ctx); err != nil {
			log.FromContext(ctx).Error(err, "watching a serving certificate", "dir", certDir)
		}
	}()
	cfg.GetCertificate = w.GetCertificate
	return cfg, nil
}

// certLifetime is long because nothing renews the certificate: it is made again at every start.
const certLifetime = 10 * 365 * 24 * time.Hour

// selfSigned makes a serving certificate for the loopback addresses, localhost and host, signed
// by an authority made for it and forgotten.
func selfSigned(now time.Time, host string) (tls.Certificate, error) {
	ca, err := certs.NewCA("flotilla-hub-explain-ca", now, certLifetime)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := x509.Certificate{
		Subject:     pkix.Name{CommonName: "flotilla-hub-explain"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else if host != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	certPEM, keyPEM, err := ca.Issue(tmpl, now, certLifetime)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
