package dashboard

import (
	"html/template"
	"net/http"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Log in · Flotilla dashboard</title></head>
<body><main>
<h1>Flotilla dashboard</h1>
{{if .Token}}
<p>Log in with a bearer token the hub's API server accepts: <code>kubectl create token NAME -n NAMESPACE</code> for a service account, or your OIDC ID token. The dashboard reads the hub with this token only, so you see what its RBAC lets you see.</p>
{{with .Error}}<p role="alert">{{.}}</p>{{end}}
<form method="post" action="/login">
<label for="token">Bearer token</label>
<input id="token" name="token" type="password" autocomplete="off" required>
<button type="submit">Log in</button>
</form>
{{else}}
<p role="alert">The hub did not accept the credentials of the kubeconfig <code>flotilla dashboard</code> was started with. Renew them (log in again with your cluster's login tool), then <a href="/">reload the dashboard</a>.</p>
{{end}}
</main></body></html>
`))

// loginErrors are the only messages the login page shows, by the code in its error parameter:
// the page never repeats text from its URL, so a link cannot make the hub's own page say
// something (a phishing instruction) in its voice. An unknown code shows nothing.
var loginErrors = map[string]string{
	"missing": "Give a token.",
	"refused": "The hub did not accept that token.",
	"ended":   "Your session has ended. Log in again.",
	"failed":  "The dashboard could not start a session. Try again, or ask the hub's administrator to look at its log.",
	"logout":  "Your browser forgot the session, but the hub could not record the logout for all its replicas: a copy of the cookie may still open until it expires. Ask the hub's administrator to look at its log.",
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = loginTemplate.Execute(w, struct {
		Token bool
		Error string
	}{s.o.Identity.TokenLogin(), loginErrors[r.URL.Query().Get("error")]})
}

// sessionKeeper is an Identity whose viewers log in with a session cookie.
type sessionKeeper interface{ sessions() *Sessions }

// sessionsOf is the Sessions of the dashboard's identity; nil when it keeps none.
func (s *Server) sessionsOf() *Sessions {
	if k, ok := s.o.Identity.(sessionKeeper); ok {
		return k.sessions()
	}
	return nil
}

// sessionCookie is the session cookie with value, for maxAge seconds (negative: delete it).
func sessionCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: SessionCookie, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: true,
		SameSite: http.SameSiteStrictMode}
}

// login checks the posted token with the API server (a SelfSubjectReview, which every
// authenticated user may make) and starts a session: the token sealed in a __Host- cookie,
// HttpOnly, Secure and SameSite=Strict, that ends with the session (SessionMaxAge, or the token's
// own expiry when sooner).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	sessions := s.sessionsOf()
	if !s.o.Identity.TokenLogin() || sessions == nil {
		http.Error(w, "405: this dashboard reads the hub with its kubeconfig; there is nothing to log in with", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		http.Redirect(w, r, LoginPath+"?error=missing", http.StatusSeeOther)
		return
	}
	r.Header.Set("Authorization", "Bearer "+token)
	if _, err := s.whoamiOf(r); err != nil {
		http.Redirect(w, r, LoginPath+"?error=refused", http.StatusSeeOther)
		return
	}
	value, expires, err := sessions.Seal(token)
	if err != nil {
		http.Redirect(w, r, LoginPath+"?error=failed", http.StatusSeeOther)
		return
	}
	maxAge := int(expires.Sub(s.o.Clock.Now()) / time.Second)
	if maxAge <= 0 {
		http.Redirect(w, r, LoginPath+"?error=refused", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, sessionCookie(value, maxAge))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the session: the hub refuses its cookie from now on, even one a browser or anyone
// who copied it sends again, and the browser is told to delete it. When the logout could not be
// recorded for the hub's other replicas, the login page says so and the hub's log says why.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	to := LoginPath
	if c, err := r.Cookie(SessionCookie); err == nil {
		if sessions := s.sessionsOf(); sessions != nil {
			if err := sessions.Revoke(r.Context(), c.Value); err != nil {
				log.FromContext(r.Context()).Error(err, "recording a dashboard logout for every replica")
				to = LoginPath + "?error=logout"
			}
		}
	}
	http.SetCookie(w, sessionCookie("", -1))
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// Whoami is who the hub says the viewer is.
type Whoami struct {
	User       string   `json:"user"`
	Groups     []string `json:"groups"`
	TokenLogin bool     `json:"tokenLogin"`
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	u, err := s.whoamiOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, u)
}

func (s *Server) whoamiOf(r *http.Request) (Whoami, *apiError) {
	c, e := s.client(r)
	if e != nil {
		return Whoami{}, e
	}
	rev := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx(r), rev); err != nil {
		return Whoami{}, hubError(err, "asking the hub who you are (a SelfSubjectReview)")
	}
	groups := rev.Status.UserInfo.Groups
	if groups == nil {
		groups = []string{}
	}
	return Whoami{User: rev.Status.UserInfo.Username, Groups: groups, TokenLogin: s.o.Identity.TokenLogin()}, nil
}
