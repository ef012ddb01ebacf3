package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves m over in and out, newline-delimited JSON-RPC as MCP's stdio transport, until
// the client closes in or ctx ends.
func ServeStdio(ctx context.Context, m *mcp.Server, in io.Reader, out io.Writer) error {
	err := m.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{out}})
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled)) {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// CheckLoopback refuses an HTTP address that is not on loopback: the server acts with the
// caller's kubeconfig identity and authenticates nobody, so anyone who can reach it acts as them.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q is not HOST:PORT (%v): give a loopback address such as 127.0.0.1:0 (a free port) or localhost:8080", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %q is not a loopback address: the server acts with your kubeconfig identity and authenticates no one, "+
		"so it listens on loopback only; give 127.0.0.1:PORT, [::1]:PORT or localhost:PORT, and reach it from elsewhere through a tunnel such as ssh -L", addr)
}

// Path is where the streamable HTTP transport is served.
const Path = "/mcp"

// ServeHTTP serves m with MCP's streamable HTTP transport on l at Path, until ctx ends; ready,
// when not nil, is called with the URL once the server listens.
func ServeHTTP(ctx context.Context, m *mcp.Server, l net.Listener, ready func(url string)) error {
	mux := http.NewServeMux()
	mux.Handle(Path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m }, nil))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	if ready != nil {
		ready("http://" + l.Addr().String() + Path)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		// Streams still open (a client's standing GET) do not end by themselves.
		_ = srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
