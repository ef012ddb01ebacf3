package dashboard

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func newSessions(t *testing.T, key string, clk *clocktesting.FakeClock) *Sessions {
	t.Helper()
	s, err := NewSessions([]byte(key), clk)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jwt is an unsigned token with exp: the dashboard reads exp only to end a session no later.
func jwt(exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(fmt.Sprintf(`{"sub":"x","exp":%d}`, exp.Unix()))) + ".sig"
}

func TestSessions(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	for name, tc := range map[string]struct {
		token   string
		later   time.Duration // from sealing to opening
		revoke  bool
		other   bool // opened by a Sessions with another key
		tamper  bool
		want    string
		wantErr bool
		wantExp time.Time
	}{
		"opens":                 {token: "opaque", want: "opaque", wantExp: t0.Add(SessionMaxAge)},
		"before the max age":    {token: "opaque", later: SessionMaxAge - time.Second, want: "opaque", wantExp: t0.Add(SessionMaxAge)},
		"at the max age":        {token: "opaque", later: SessionMaxAge, wantErr: true, wantExp: t0.Add(SessionMaxAge)},
		"a JWT ends it sooner":  {token: jwt(t0.Add(time.Hour)), later: time.Hour, wantErr: true, wantExp: t0.Add(time.Hour)},
		"a JWT that ends later": {token: jwt(t0.Add(48 * time.Hour)), later: time.Hour, want: jwt(t0.Add(48 * time.Hour)), wantExp: t0.Add(SessionMaxAge)},
		"logged out":            {token: "opaque", revoke: true, wantErr: true, wantExp: t0.Add(SessionMaxAge)},
		"another replica's key": {token: "opaque", other: true, wantErr: true, wantExp: t0.Add(SessionMaxAge)},
		"a changed cookie":      {token: "opaque", tamper: true, wantErr: true, wantExp: t0.Add(SessionMaxAge)},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(t0)
			s := newSessions(t, key, clk)
			value, exp, err := s.Seal(tc.token)
			if err != nil {
				t.Fatal(err)
			}
			if !exp.Equal(tc.wantExp) {
				t.Errorf("expires %s, want %s", exp, tc.wantExp)
			}
			if strings.Contains(value, tc.token) {
				t.Errorf("the cookie %q holds the token in the clear", value)
			}
			if tc.revoke {
				if err := s.Revoke(context.Background(), value); err != nil {
					t.Fatal(err)
				}
			}
			if tc.other {
				s = newSessions(t, strings.ToUpper(key), clk)
			}
			if tc.tamper {
				b := []byte(value)
				b[len(b)/2] ^= 1
				value = string(b)
			}
			clk.Step(tc.later)
			got, err := s.Token(value)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("Token() = %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
	if _, err := NewSessions([]byte("short"), clocktesting.NewFakeClock(t0)); err == nil || !strings.Contains(err.Error(), "session.key") {
		t.Errorf("a 5-byte key: %v, want a refusal naming session.key", err)
	}
}

// TestRevokedForgottenAfterExpiry: the revocation list holds a session only until it would have
// ended anyway.
func TestRevokedForgottenAfterExpiry(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := newSessions(t, "0123456789abcdef0123456789abcdef", clk)
	first, _, _ := s.Seal("a")
	_ = s.Revoke(context.Background(), first)
	clk.Step(SessionMaxAge)
	second, _, _ := s.Seal("b")
	_ = s.Revoke(context.Background(), second)
	if got := len(s.local.ids); got != 1 {
		t.Errorf("%d sessions held as revoked, want 1 (the expired one forgotten)", got)
	}
}

// TestSharedRevocations: two replicas with the same key and the same shared Revocations; a
// logout on one is refused by the other. Without ShareRevocations the other still opens it.
func TestSharedRevocations(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	for name, share := range map[string]bool{"shared": true, "this replica only": false} {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(t0)
			a, b := newSessions(t, key, clk), newSessions(t, key, clk)
			if share {
				shared := newMemoryRevocations(clk)
				a.ShareRevocations(shared)
				b.ShareRevocations(shared)
			}
			value, _, _ := a.Seal("tok")
			if err := a.Revoke(context.Background(), value); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Token(value); err == nil {
				t.Error("the replica that logged out opens the cookie")
			}
			if _, err := b.Token(value); (err != nil) != share {
				t.Errorf("the other replica opening the logged-out cookie: %v, want refused %v", err, share)
			}
		})
	}
}

// failingRevocations fail every write.
type failingRevocations struct{}

func (failingRevocations) Revoked(string) bool { return false }
func (failingRevocations) Revoke(context.Context, string, time.Time) error {
	return errors.New("the API server is away")
}

// TestSharedRevocationFails: a logout the shared store did not take is still refused here, and
// Revoke says it failed.
func TestSharedRevocationFails(t *testing.T) {
	s := newSessions(t, "0123456789abcdef0123456789abcdef", clocktesting.NewFakeClock(t0)).ShareRevocations(failingRevocations{})
	value, _, _ := s.Seal("tok")
	if err := s.Revoke(context.Background(), value); err == nil {
		t.Error("Revoke with a failing shared store: no error")
	}
	if _, err := s.Token(value); err == nil {
		t.Error("this replica opens a cookie it logged out of")
	}
}

func TestLogoutsAfter(t *testing.T) {
	now := t0
	exp := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	full := map[string]string{}
	for i := range maxLogouts {
		full[fmt.Sprintf("s%d", i)] = exp(time.Hour)
	}
	for name, tc := range map[string]struct {
		data    map[string]string
		id      string
		want    map[string]string
		wantErr error
	}{
		"the first":               {id: "a", want: map[string]string{"a": exp(time.Hour)}},
		"beside one open":         {data: map[string]string{"b": exp(time.Minute)}, id: "a", want: map[string]string{"a": exp(time.Hour), "b": exp(time.Minute)}},
		"expired ones go":         {data: map[string]string{"b": exp(0), "c": exp(-time.Hour)}, id: "a", want: map[string]string{"a": exp(time.Hour)}},
		"garbage goes":            {data: map[string]string{"b": "soon"}, id: "a", want: map[string]string{"a": exp(time.Hour)}},
		"again":                   {data: map[string]string{"a": exp(time.Hour)}, id: "a", want: map[string]string{"a": exp(time.Hour)}},
		"full":                    {data: full, id: "a", wantErr: errTooManyLogouts},
		"full, the same id again": {data: full, id: "s7", want: full},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := logoutsAfter(tc.data, now, tc.id, now.Add(time.Hour))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeAPIServer answers SelfSubjectReviews for the token "good" only, as system:serviceaccount:ml:reader.
func fakeAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/apis/authentication.k8s.io/v1/selfsubjectreviews" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":"system:serviceaccount:ml:reader","groups":["system:authenticated"]}}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestLoginSession logs in, reads, logs out and reads again with the copied cookie, over TLS as
// the hub serves it.
func TestLoginSession(t *testing.T) {
	api := fakeAPIServer(t)
	clk := clocktesting.NewFakeClock(t0)
	sessions := newSessions(t, "0123456789abcdef0123456789abcdef", clk)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "SelfSubjectReview"}, meta.RESTScopeRoot)
	dash := httptest.NewTLSServer(New(Options{Identity: BearerToken{Host: api.URL, Sessions: sessions}, Mapper: mapper, Clock: clk}))
	t.Cleanup(dash.Close)
	hc := dash.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	post := func(path string, form url.Values, cookie *http.Cookie) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, dash.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie != nil {
			req.AddCookie(cookie)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res
	}
	whoami := func(cookie *http.Cookie) (int, apiError) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, dash.URL+"/api/whoami", nil)
		req.AddCookie(cookie)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		var e apiError
		_ = json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, e
	}

	res := post("/login", url.Values{"token": {"bad"}}, nil)
	if loc := res.Header.Get("Location"); loc != "/login?error=refused" || len(res.Cookies()) > 0 {
		t.Errorf("a refused token: Location %q, cookies %v; want /login?error=refused and no cookie", loc, res.Cookies())
	}
	res = post("/login", url.Values{"token": {"good"}}, nil)
	if len(res.Cookies()) != 1 {
		t.Fatalf("login set cookies %v, want one", res.Cookies())
	}
	c := res.Cookies()[0]
	got := struct {
		Name, Path               string
		MaxAge                   int
		Secure, HTTPOnly, Domain bool
		SameSite                 http.SameSite
	}{c.Name, c.Path, c.MaxAge, c.Secure, c.HttpOnly, c.Domain != "", c.SameSite}
	want := got
	want.Name, want.Path, want.MaxAge, want.Secure, want.HTTPOnly, want.Domain, want.SameSite =
		"__Host-flotilla-dashboard", "/", int(SessionMaxAge/time.Second), true, true, false, http.SameSiteStrictMode
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the session cookie (-want +got):\n%s", diff)
	}
	if strings.Contains(c.Value, "good") {
		t.Errorf("the cookie %q holds the token in the clear", c.Value)
	}
	if code, e := whoami(c); code != http.StatusOK {
		t.Fatalf("whoami with the session = %d %+v, want 200", code, e)
	}

	res = post("/logout", nil, c)
	if gone := res.Cookies(); len(gone) != 1 || gone[0].Name != SessionCookie || gone[0].MaxAge >= 0 {
		t.Errorf("logout set cookies %v, want the session cookie deleted", gone)
	}
	// The browser forgets it; one who copied it sends it again, and is refused.
	if code, e := whoami(c); code != http.StatusUnauthorized || e.Login != "/login?error=ended" {
		t.Errorf("whoami with the logged-out cookie = %d %+v, want 401 sending to /login?error=ended", code, e)
	}

	res = post("/login", url.Values{"token": {"good"}}, nil)
	c = res.Cookies()[0]
	clk.Step(SessionMaxAge)
	if code, e := whoami(c); code != http.StatusUnauthorized {
		t.Errorf("whoami with a session past its max age = %d %+v, want 401", code, e)
	}
}

// TestLoginPageShowsOnlyItsOwnMessages: the page's error parameter picks one of its messages;
// text in the URL is never shown.
func TestLoginPageShowsOnlyItsOwnMessages(t *testing.T) {
	for name, tc := range map[string]struct {
		query      string
		want, bans string
	}{
		"refused":   {query: "?error=refused", want: `<p role="alert">The hub did not accept that token.</p>`},
		"ended":     {query: "?error=ended", want: `<p role="alert">Your session has ended. Log in again.</p>`},
		"free text": {query: "?error=" + url.QueryEscape("Call +1 555 0100 and read them your token."), bans: "555"},
		"markup":    {query: "?error=" + url.QueryEscape("<b>urgent</b>"), bans: "urgent"},
		"none":      {query: "", bans: `role="alert"`},
	} {
		t.Run(name, func(t *testing.T) {
			code, body, _ := request(t, Options{Identity: BearerToken{}}, "GET", "/login"+tc.query, "", nil)
			if code != http.StatusOK || !strings.Contains(body, tc.want) || (tc.bans != "" && strings.Contains(body, tc.bans)) {
				t.Errorf("GET /login%s = %d\n%s\nwant it to hold %q and not %q", tc.query, code, body, tc.want, tc.bans)
			}
		})
	}
}

func TestBearerTokenFromRequest(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	sessions := newSessions(t, "0123456789abcdef0123456789abcdef", clk)
	sealed, _, _ := sessions.Seal("def")
	for name, tc := range map[string]struct {
		header, cookie string
		want           string
		wantErr        string
	}{
		"header":       {header: "Bearer abc", want: "abc"},
		"session":      {cookie: sealed, want: "def"},
		"header first": {header: "Bearer abc", cookie: sealed, want: "abc"},
		"basic":        {header: "Basic eDp5", cookie: sealed, wantErr: "holds no bearer token"},
		"a raw token":  {cookie: "def", wantErr: "your session has ended"},
		"none":         {wantErr: "no credential"},
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			if tc.cookie != "" {
				r.AddCookie(&http.Cookie{Name: SessionCookie, Value: tc.cookie})
			}
			got, err := BearerToken{Sessions: sessions}.token(r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("token() = %q, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("token() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
