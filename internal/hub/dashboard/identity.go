package dashboard

import (
	"net/http"
	"strings"

	"k8s.io/client-go/rest"
)

// Identity turns a viewer's request into the configuration that reads the hub as that viewer.
type Identity interface {
	// Config is the configuration of the viewer of r. It returns an error with status 401 when r
	// carries no credential the identity can use.
	Config(r *http.Request) (*rest.Config, error)
	// TokenLogin says whether the viewer logs in by giving a bearer token (the login page asks for
	// one), rather than the server using a kubeconfig.
	TokenLogin() bool
}

// Kubeconfig is the identity of `flotilla dashboard`: every request reads the hub with the
// kubeconfig it was started with, as `kubectl proxy` does. Serve it on loopback only.
type Kubeconfig struct {
	REST *rest.Config
}

// Config is k's configuration, whoever asks: the server is the viewer's own process.
func (k Kubeconfig) Config(*http.Request) (*rest.Config, error) { return rest.CopyConfig(k.REST), nil }

// TokenLogin is false: the kubeconfig is the credential.
func (Kubeconfig) TokenLogin() bool { return false }

// TokenCookie is the cookie that holds the token a viewer logged in with.
const TokenCookie = "flotilla-dashboard-token"

// BearerToken is the identity of the dashboard the hub serves: the viewer gives a bearer token
// (`kubectl create token`, or their OIDC ID token) on the login page, kept in an HttpOnly,
// SameSite=Strict cookie, or in an Authorization: Bearer header. Each request reads the hub with
// the API server's address and CA and that token only, never the hub's own credentials; the API
// server authenticates the token and its RBAC decides what the viewer reads.
type BearerToken struct {
	// Host is the hub API server's URL; CAData or CAFile the CA that signed its serving
	// certificate, and ServerName the name to check in it when Host's differs.
	Host       string
	CAData     []byte
	CAFile     string
	ServerName string
}

// BearerTokenFor is the identity that reads the API server cfg reaches with viewers' tokens: it
// keeps cfg's address and CA, and none of its credentials.
func BearerTokenFor(cfg *rest.Config) BearerToken {
	return BearerToken{Host: cfg.Host, CAData: cfg.CAData, CAFile: cfg.CAFile, ServerName: cfg.ServerName}
}

// Config is the configuration that presents the request's token.
func (b BearerToken) Config(r *http.Request) (*rest.Config, error) {
	token := RequestToken(r)
	if token == "" {
		return nil, unauthorized("no credential: log in with a bearer token the hub's API server accepts")
	}
	return &rest.Config{Host: b.Host, TLSClientConfig: rest.TLSClientConfig{CAData: b.CAData, CAFile: b.CAFile, ServerName: b.ServerName},
		BearerToken: token}, nil
}

// TokenLogin is true: viewers log in with a token.
func (BearerToken) TokenLogin() bool { return true }

// RequestToken is the bearer token of r: its Authorization header's, else its cookie's; "" when
// it has neither.
func RequestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
		return ""
	}
	if c, err := r.Cookie(TokenCookie); err == nil {
		return c.Value
	}
	return ""
}
