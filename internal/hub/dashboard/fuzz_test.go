package dashboard

import (
	"net/url"
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"
)

// FuzzParseQuery feeds the API's query parser what any browser may send: it must answer a page
// request or a 400 naming a parameter, never panic.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "limit=10", "limit=-1&continue=x", "labelSelector=a in (b,c)", "view=fleet&namespace=ml", "limit=99999999999999999999", "cluster=gpu-1", "cluster=.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		got, e := parseQuery(q, "limit", "continue", "namespace", "labelSelector", "view", "cluster")
		if e != nil {
			if e.Code != 400 || e.Message == "" {
				t.Fatalf("parseQuery(%q): error %+v, want a 400 with a message", raw, e)
			}
			return
		}
		if got.Limit < 1 || got.Limit > MaxLimit || got.LabelSelector == nil {
			t.Fatalf("parseQuery(%q) = %+v: limit out of range or no selector", raw, got)
		}
	})
}

// FuzzSessionCookie feeds the session cookie's decoder what any browser may send: it never
// panics, and nothing but a cookie the dashboard sealed opens (the seeds include one, and that
// one with a byte changed).
func FuzzSessionCookie(f *testing.F) {
	clk := clocktesting.NewFakeClock(t0)
	s, err := NewSessions([]byte("0123456789abcdef0123456789abcdef"), clk)
	if err != nil {
		f.Fatal(err)
	}
	sealed, _, err := s.Seal("viewer-token")
	if err != nil {
		f.Fatal(err)
	}
	changed := []byte(sealed)
	changed[len(changed)-1] ^= 1
	for _, v := range []string{"", "x", sealed, string(changed), "viewer-token", strings.Repeat("A", 200)} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, value string) {
		tok, err := s.Token(value)
		if err != nil {
			return
		}
		// Only "viewer-token" is ever sealed with this key. The seal's nonce is random and each
		// fuzzing worker runs this setup again, so a genuine seal made by another process opens
		// too: the property is that nothing opens to another token.
		if tok != "viewer-token" {
			t.Fatalf("Token(%q) = %q: a cookie the dashboard did not seal opened", value, tok)
		}
	})
}
