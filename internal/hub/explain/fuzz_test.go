package explain

import (
	"testing"
)

// FuzzDecodeBody feeds the what-if endpoint's decoder arbitrary bodies, as any hub user may
// POST them. It must never panic; a Placement it accepts is in the path's namespace.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"cluster.open-cluster-management.io/v1beta1","kind":"Placement","metadata":{"name":"p"},"spec":{"numberOfClusters":2}}`,
		"apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p, namespace: team}\nspec:\n  predicates:\n  - requiredClusterSelector:\n      labelSelector: {matchLabels: {a: b}}\n",
		`{"apiVersion":"cluster.open-cluster-management.io/v1beta1","kind":"Placement","metadata":{"name":"p","namespace":"other"}}`,
		`{"apiVersion":"cluster.open-cluster-management.io/v1beta1","kind":"Placement","spec":{"numberOfClusters":"two"}}`,
		`{"apiVersion":"cluster.open-cluster-management.io/v1beta1","kind":"Placement","spec":{},"spec":{}}`,
		"- a\n- b",
		"",
		"{",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeBody(body, "team")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("decodeBody failed with an empty message")
			}
			return
		}
		if p.Namespace != "team" {
			t.Fatalf("decodeBody accepted a Placement in namespace %q for the path's namespace team", p.Namespace)
		}
	})
}
