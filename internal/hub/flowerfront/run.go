package flowerfront

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// The command-line flags of `flotilla flower-front`, one per Options field; errors name them.
const (
	FlagListen           = "listen"
	FlagUpstream         = "upstream"
	FlagCertFile         = "tls-cert-file"
	FlagKeyFile          = "tls-key-file"
	FlagControlTokenFile = "control-token-file"
)

// Options configures Run.
type Options struct {
	// Listen is the HOST:PORT the front serves HTTPS on (--listen), e.g. ":9093".
	Listen string
	// Upstream is the SuperLink's plain-HTTP address on the pod's loopback (--upstream), e.g.
	// "http://127.0.0.1:9091".
	Upstream string
	// CertFile and KeyFile are the front's serving certificate and key in PEM (--tls-cert-file,
	// --tls-key-file), reloaded when the files change.
	CertFile, KeyFile string
	// ControlTokenFile holds the hub's bearer token for the Control API (--control-token-file),
	// read once at start; a trailing newline is not part of it.
	ControlTokenFile string
}

// Timeouts of the front's server. There is no overall write (or read) timeout: a log stream or a
// model upload may last as long as the run.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	shutdownGrace     = 5 * time.Second
)

// Run serves the front (Handler) over HTTPS, HTTP/1.1 and HTTP/2, TLS 1.2 or newer, until ctx
// ends; then it stops accepting, lets requests in flight finish for a few seconds and closes
// what is left (open log streams). A clean stop returns nil.
func Run(ctx context.Context, o Options) error {
	upstream, err := o.validate()
	if err != nil {
		return err
	}
	token, err := readToken(o.ControlTokenFile)
	if err != nil {
		return err
	}
	certs, err := certwatcher.New(o.CertFile, o.KeyFile)
	if err != nil {
		return fmt.Errorf("--%s %s with --%s %s: %w: give a PEM certificate and its private key",
			FlagCertFile, o.CertFile, FlagKeyFile, o.KeyFile, err)
	}
	ctx, cancel := context.WithCancel(ctx) // also stops the watcher and the shutdown goroutine on an early return
	defer cancel()
	logger := log.FromContext(ctx).WithName("flower-front")
	go func() {
		if err := certs.Start(ctx); err != nil {
			logger.Error(err, "watching the serving certificate", "cert", o.CertFile, "key", o.KeyFile)
		}
	}()
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--%s %s: %w", FlagListen, o.Listen, err)
	}
	srv := &http.Server{
		Handler:           Handler(upstream, token),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
		BaseContext:       func(net.Listener) context.Context { return log.IntoContext(context.Background(), logger) },
		Protocols:         new(http.Protocols),
	}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	logger.Info("serving the Flower SuperLink's Fleet and Runtime APIs, and its Control API to the hub",
		"address", l.Addr().String(), "upstream", upstream.String())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close() // streams still open after the grace period
		}
	}()
	if err := srv.ServeTLS(l, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("--%s %s: %w", FlagListen, o.Listen, err)
	}
	<-stopped
	return nil
}

// validate checks o without reading files, and returns the upstream URL. It reports every
// problem at once.
func (o Options) validate() (*url.URL, error) {
	var errs []error
	if o.Listen == "" {
		errs = append(errs, fmt.Errorf("--%s is required: give the HOST:PORT to serve HTTPS on, e.g. :9093", FlagListen))
	} else if _, port, err := net.SplitHostPort(o.Listen); err != nil || port == "" {
		errs = append(errs, fmt.Errorf("--%s %q is not HOST:PORT: give e.g. :9093 or 0.0.0.0:9093", FlagListen, o.Listen))
	}
	upstream, err := parseUpstream(o.Upstream)
	errs = append(errs, err)
	for _, f := range []struct{ flag, value, what string }{
		{FlagCertFile, o.CertFile, "the PEM certificate the front serves"},
		{FlagKeyFile, o.KeyFile, "the PEM private key of --" + FlagCertFile},
		{FlagControlTokenFile, o.ControlTokenFile, "the file with the hub's bearer token for the Control API"},
	} {
		if f.value == "" {
			errs = append(errs, fmt.Errorf("--%s is required: give %s", f.flag, f.what))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return upstream, nil
}

// readToken reads the hub's token; one trailing newline (an editor's, or echo's) is not part of
// it. A token with a space or a control character could never match an Authorization header.
func readToken(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", FlagControlTokenFile, err)
	}
	token := bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(token) == 0 {
		return nil, fmt.Errorf("--%s %s is empty: write the hub's bearer token for the Control API into it", FlagControlTokenFile, file)
	}
	if i := bytes.IndexFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return nil, fmt.Errorf("--%s %s: the token has a space or control character at byte %d: write the token alone, on one line",
			FlagControlTokenFile, file, i)
	}
	return token, nil
}
