package flowerfront

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// The SuperLink's API prefixes (Flower 1.42's FastAPI routers) and its health path.
const (
	fleetPrefix   = "/v1/fleet/"
	runtimePrefix = "/v1/runtime/"
	controlPrefix = "/v1/control/"
	healthPath    = "/health"
)

// Answers of the front itself, short and plain: the flwr CLI and curl show them as they are.
const (
	msgBadPath = "the request path is not in clean form (no '.', '..', '//', trailing '/', " +
		"percent-encoding or backslash): send the SuperLink API's path as it is\n"
	msgNotFound = "this endpoint serves only a Flower SuperLink's Fleet API (" + fleetPrefix + "), Runtime API (" +
		runtimePrefix + ") and " + healthPath + "\n"
	msgControlRefused = "the Control API of this Flower SuperLink is reachable only by the Flotilla hub; " +
		"to use it yourself (flwr ls, flwr log), run `kubectl port-forward` to the SuperLink pod " +
		"and point the flwr CLI at the forwarded port\n"
	msgUpstreamDown = "the Flower SuperLink behind this endpoint did not answer; see the SuperLink container's log\n"
	msgRegistration = "SuperNodes of this Flower SuperLink do not register themselves: the Flotilla hub registers the key " +
		"of each client cluster's SuperNode; start flower-supernode with --auth-supernode-private-key and the key the hub gave the cluster\n"
)

// Fleet API paths by which a SuperNode registers (or unregisters) itself. Flower refuses them
// only with --enable-supernode-auth, which it allows only on a TLS SuperLink; the front refuses
// them always, so that only the keys the hub registers through the Control API are admitted
// (Flower checks every other Fleet request's signature against the registered keys).
var selfRegistration = map[string]bool{fleetPrefix + "register-node": true, fleetPrefix + "unregister-node": true}

// route is what the front does with a request path.
type route int

const (
	routeBadPath      route = iota // 400: not in clean form
	routeNotFound                  // 404: not a SuperLink API the front serves
	routeOpen                      // forwarded: Flower authenticates the caller (Fleet, Runtime) or nothing is secret (health)
	routeControl                   // forwarded only with the hub's token
	routeRegistration              // 403: a SuperNode registering itself
)

// classify decides a request's route from its escaped path (url.URL.EscapedPath). Flower's routes
// are plain ASCII in kebab case, so a clean path needs no escape: a percent sign, a backslash, or
// a path that path.Clean would change is refused rather than normalised, because the SuperLink
// would decode or resolve it on its own terms.
func classify(escapedPath string) route {
	p := escapedPath
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, `%\`) || path.Clean(p) != p {
		return routeBadPath
	}
	switch {
	case selfRegistration[p]:
		return routeRegistration
	case p == healthPath, under(p, fleetPrefix), under(p, runtimePrefix):
		return routeOpen
	case under(p, controlPrefix):
		return routeControl
	}
	return routeNotFound
}

// under reports whether the clean path p names something below prefix (which ends in "/").
func under(p, prefix string) bool { return len(p) > len(prefix) && strings.HasPrefix(p, prefix) }

// Handler returns the front: a reverse proxy to upstream, the SuperLink's plain-HTTP address
// (http://127.0.0.1:PORT, no path), that forwards the Fleet and Runtime APIs and /health, and the
// Control API only to requests with Authorization: Bearer controlToken. An empty controlToken
// refuses every Control request.
func Handler(upstream *url.URL, controlToken []byte) http.Handler {
	f := &front{tokenSum: sha256.Sum256(controlToken), hasToken: len(controlToken) > 0}
	f.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			// uvicorn trusts X-Forwarded-For and -Proto from loopback, which is where the front
			// connects from: only the front's own may reach it. (Rewrite has already removed
			// Forwarded and X-Forwarded-For, -Host and -Proto; this removes any other variant.)
			for k := range pr.Out.Header {
				if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-forwarded-") || lk == "forwarded" || lk == "x-real-ip" {
					delete(pr.Out.Header, k)
				}
			}
			// The hub's token is for the front. Flower's credentials for federated learning travel
			// in flwr-* headers; only /v1/runtime/responses, for Flower's AgentApps, reads an
			// Authorization header, and gets none through the front.
			pr.Out.Header.Del("Authorization")
			pr.SetXForwarded()
		},
		Transport:     upstreamTransport(),
		FlushInterval: -1, // stream-logs and other streamed answers flow as Flower writes them
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the caller went away; nobody reads an answer
			}
			log.FromContext(r.Context()).Error(err, "forwarding to the Flower SuperLink", "upstream", upstream.Host, "path", r.URL.Path)
			http.Error(w, msgUpstreamDown, http.StatusBadGateway)
		},
	}
	return f
}

// front is the Handler.
type front struct {
	proxy *httputil.ReverseProxy
	// tokenSum is the SHA-256 of the hub's token: comparing digests takes the same time whatever
	// the length of the token a caller sends.
	tokenSum [sha256.Size]byte
	hasToken bool
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch classify(r.URL.EscapedPath()) {
	case routeBadPath:
		http.Error(w, msgBadPath, http.StatusBadRequest)
	case routeNotFound:
		http.Error(w, msgNotFound, http.StatusNotFound)
	case routeRegistration:
		http.Error(w, msgRegistration, http.StatusForbidden)
	case routeControl:
		if !f.authorized(r.Header.Values("Authorization")) {
			http.Error(w, msgControlRefused, http.StatusForbidden)
			return
		}
		f.proxy.ServeHTTP(w, r)
	case routeOpen:
		f.proxy.ServeHTTP(w, r)
	}
}

// authorized reports whether the Authorization header values are exactly one "Bearer <token>"
// with the hub's token.
func (f *front) authorized(values []string) bool {
	if !f.hasToken || len(values) != 1 {
		return false
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], f.tokenSum[:]) == 1
}

// upstreamTransport dials the SuperLink directly: no proxy from the environment, nothing
// decompressed on the way (bodies pass as Flower wrote them).
func upstreamTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// parseUpstream checks the SuperLink's address as --upstream gives it.
func parseUpstream(s string) (*url.URL, error) {
	const fix = "give the SuperLink's plain-HTTP address on the pod's loopback, http://127.0.0.1:PORT (its --host and --port)"
	if s == "" {
		return nil, fmt.Errorf("--%s is required: %s", FlagUpstream, fix)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the repeated address
		}
		return nil, fmt.Errorf("--%s %q: %w: %s", FlagUpstream, s, err, fix)
	}
	switch {
	case u.Scheme != "http":
		return nil, fmt.Errorf("--%s %q: scheme %q is not http: %s", FlagUpstream, s, u.Scheme, fix)
	case u.Port() == "" || u.Hostname() == "":
		return nil, fmt.Errorf("--%s %q has no HOST:PORT: %s", FlagUpstream, s, fix)
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("--%s %q has more than a scheme and HOST:PORT (a path, query, fragment or user): %s", FlagUpstream, s, fix)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}
