package dashboard

import (
	"net/url"
	"testing"
)

// FuzzParseQuery feeds the API's query parser what any browser may send: it must answer a page
// request or a 400 naming a parameter, never panic.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "limit=10", "limit=-1&continue=x", "labelSelector=a in (b,c)", "view=fleet&namespace=ml", "limit=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		got, e := parseQuery(q, "limit", "continue", "namespace", "labelSelector", "view")
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
