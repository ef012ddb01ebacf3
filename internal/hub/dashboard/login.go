package dashboard

import (
	"html/template"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Log in · Flotilla dashboard</title></head>
<body><main>
<h1>Flotilla dashboard</h1>
{{if .Token}}
<p>Log in with a bearer token the hub's API server accepts: <code>kubectl create token NAME -n NAMESPACE</code> for a service account, or your OIDC ID token. The dashboard reads the hub with this token only, so you see what its RBAC lets you see.</p>
{{if .Error}}<p role="alert">{{.Error}}</p>{{end}}
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

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = loginTemplate.Execute(w, struct {
		Token bool
		Error string
	}{s.o.Identity.TokenLogin(), r.URL.Query().Get("error")})
}

// login checks the posted token with the API server (a SelfSubjectReview, which every
// authenticated user may make) and keeps it in an HttpOnly, SameSite=Strict cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.o.Identity.TokenLogin() {
		http.Error(w, "405: this dashboard reads the hub with its kubeconfig; there is nothing to log in with", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		http.Redirect(w, r, LoginPath+"?error=Give+a+token.", http.StatusSeeOther)
		return
	}
	r.Header.Set("Authorization", "Bearer "+token)
	if _, err := s.whoamiOf(r); err != nil {
		http.Redirect(w, r, LoginPath+"?error=The+hub+did+not+accept+that+token.", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: token, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
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
