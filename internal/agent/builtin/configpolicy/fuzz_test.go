package configpolicy

import (
	"encoding/json"
	"testing"
)

// FuzzMatchMerge compares and merges arbitrary JSON objects (an object template comes from
// whoever writes policies; the object from the cluster): neither may panic, and what merge
// writes under enforce must match the template it was merged from.
func FuzzMatchMerge(f *testing.F) {
	f.Add(`{"spec":{"limits":[{"type":"Container"}]},"metadata":{"labels":{"a":"1"}}}`, `{"spec":{"limits":[{"type":"Pod"}]}}`, false)
	f.Add(`{"data":{"k":"v"},"n":3}`, `{"data":"x","n":3.0}`, true)
	f.Add(`{"a":[[1],[2,[3]]]}`, `{"a":[[2,[3]]],"b":null}`, false)
	f.Fuzz(func(t *testing.T, tmplJSON, objJSON string, exact bool) {
		tmpl, obj := map[string]any{}, map[string]any{}
		if json.Unmarshal([]byte(tmplJSON), &tmpl) != nil || json.Unmarshal([]byte(objJSON), &obj) != nil {
			return
		}
		_, _ = matches(tmpl, obj, only(exact), only(exact))
		merged := merge(tmpl, obj, only(exact), only(exact))
		if ok, why := matches(tmpl, merged, only(exact), only(exact)); !ok {
			t.Fatalf("merge(%s, %s) does not match its template: %s", tmplJSON, objJSON, why)
		}
	})
}
