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

// BearerToken is the identity of the dashboard the hub serves: the viewer gives a bearer token
// (`kubectl create token`, or their OIDC ID token) on the login page, which the dashboard seals
// into a session cookie (Sessions), or sends it in an Authorization: Bearer header. Each request
// reads the hub with the API server's address and CA and that token only, never the hub's own
// credentials; the API server authenticates the token and its RBAC decides what the viewer reads.
type BearerToken struct {
	// Host is the hub API server's URL; CAData or CAFile the CA that signed its serving
	// certificate, and ServerName the name to check in it when Host's differs.
	Host       string
	CAData     []byte
	CAFile     string
	ServerName string
	// Sessions seals and opens the session cookies of viewers who log in on the login page; nil
	// takes only the Authorization header.
	Sessions *Sessions
}

// BearerTokenFor is the identity that reads the API server cfg reaches with viewers' tokens: it
// keeps cfg's address and CA, and none of its credentials.
func BearerTokenFor(cfg *rest.Config, sessions *Sessions) BearerToken {
	return BearerToken{Host: cfg.Host, CAData: cfg.CAData, CAFile: cfg.CAFile, ServerName: cfg.ServerName, Sessions: sessions}
}

// Config is the configuration that presents the request's token.
func (b BearerToken) Config(r *http.Request) (*rest.Config, error) {
	token, err := b.token(r)
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: b.Host, TLSClientConfig: rest.TLSClientConfig{CAData: b.CAData, CAFile: b.CAFile, ServerName: b.ServerName},
		BearerToken: token}, nil
}

// token is the bearer token of r: its Authorization header's, else its session cookie's.
func (b BearerToken) token(r *http.Request) (string, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok && strings.TrimSpace(t) != "" {
			return strings.TrimSpace(t), nil
		}
		return "", unauthorized("the Authorization header holds no bearer token: send Authorization: Bearer TOKEN, or log in")
	}
	if c, err := r.Cookie(SessionCookie); err == nil && b.Sessions != nil {
		t, err := b.Sessions.Token(c.Value)
		if err != nil {
			e := unauthorized(err.Error())
			e.Login = LoginPath + "?error=ended"
			return "", e
		}
		return t, nil
	}
	return "", unauthorized("no credential: log in with a bearer token the hub's API server accepts")
}

// TokenLogin is true: viewers log in with a token.
func (BearerToken) TokenLogin() bool { return true }

// sessions is the Sessions that seal the identity's login cookies; nil when it has none.
func (b BearerToken) sessions() *Sessions { return b.Sessions }
