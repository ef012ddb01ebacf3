package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// metadataHosts are cloud metadata services' names; what they resolve to is refused too.
var metadataHosts = map[string]bool{"metadata.google.internal": true}

// metadataAddrs are cloud metadata services (AWS, GCP, Azure, OpenStack: 169.254.169.254; AWS
// over IPv6: fd00:ec2::254). They are refused even with AllowLocal: a local fleet needs
// loopback, never a metadata service.
var metadataAddrs = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// ErrRefused is wrapped by every refusal of an address or a redirect.
var ErrRefused = errors.New("refused")

// CheckAddr refuses a metadata address, and a loopback, unspecified or link-local one unless
// allowLocal.
func CheckAddr(a netip.Addr, allowLocal bool) error {
	a = a.Unmap()
	for _, m := range metadataAddrs {
		if a == m {
			return fmt.Errorf("%w: %s is a cloud metadata address", ErrRefused, a)
		}
	}
	if allowLocal {
		return nil
	}
	switch {
	case a.IsLoopback():
		return fmt.Errorf("%w: %s is a loopback address", ErrRefused, a)
	case a.IsUnspecified():
		return fmt.Errorf("%w: %s is the unspecified address", ErrRefused, a)
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s is a link-local address (cloud metadata services live there)", ErrRefused, a)
	}
	return nil
}

// CheckURL refuses a URL that is not http(s), or whose host is a metadata name or a refused
// literal address. Names are checked again, resolved, when dialed.
func CheckURL(raw string, allowLocal bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q, want http or https", ErrRefused, u.Scheme)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if metadataHosts[host] {
		return fmt.Errorf("%w: %s is a cloud metadata service", ErrRefused, host)
	}
	if !allowLocal && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
		return fmt.Errorf("%w: %s is a loopback name", ErrRefused, host)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return CheckAddr(a, allowLocal)
	}
	return nil
}

// Control is a net.Dialer Control that refuses, after resolution, the addresses CheckAddr
// refuses.
func Control(allowLocal bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		a, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%w: dialing %s: not an IP address", ErrRefused, address)
		}
		return CheckAddr(a, allowLocal)
	}
}

// Transport is http.DefaultTransport's settings with no proxy and the guarded dialer.
func Transport(allowLocal bool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: Control(allowLocal)}
	t.DialContext = d.DialContext
	return t
}

// NoRedirect is an http.Client CheckRedirect that hands back the 3xx instead of following it.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Client is the guarded client with timeout; rt replaces the transport when not nil (tests that
// route every request to one server), and then carries the address check itself or none.
func Client(timeout time.Duration, allowLocal bool, rt http.RoundTripper) *http.Client {
	if rt == nil {
		rt = Transport(allowLocal)
	}
	return &http.Client{Timeout: timeout, Transport: rt, CheckRedirect: NoRedirect}
}

// Do checks req's URL, sends it with c and refuses a redirect: the response is returned only
// when it is not a 3xx (its body is then the caller's to close).
func Do(ctx context.Context, c *http.Client, req *http.Request, allowLocal bool) (*http.Response, error) {
	if err := CheckURL(req.URL.String(), allowLocal); err != nil {
		return nil, err
	}
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: %s answered HTTP %d redirecting to %q; redirects are not followed: point the URL at the final address",
			ErrRefused, req.URL.Redacted(), resp.StatusCode, resp.Header.Get("Location"))
	}
	return resp, nil
}
