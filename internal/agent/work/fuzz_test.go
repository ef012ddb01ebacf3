package work

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// FuzzDecode feeds the work agent's manifest decoding arbitrary bytes, as a ManifestWork's
// author may write them. It must never panic; each manifest either decodes to an object with a
// name or carries an error, and the apply order keeps every manifest exactly once.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}}`,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b"}}`,
		`{"kind":"ConfigMap","metadata":{"name":"c"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":7}}`,
		`[]`,
		`null`,
		`{"apiVersion":"v1/v2/v3","kind":"","metadata":{"name":"x"}}`,
	} {
		f.Add([]byte(seed), []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ms := []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: a}}, {RawExtension: runtime.RawExtension{Raw: b}}}
		decoded := decode(ms)
		if len(decoded) != len(ms) {
			t.Fatalf("decode returned %d manifests for %d", len(decoded), len(ms))
		}
		for i, m := range decoded {
			if (m.Obj == nil) == (m.Err == nil) {
				t.Fatalf("manifest %d: want exactly one of an object and an error, got object %v, error %v", i, m.Obj, m.Err)
			}
			if m.Obj != nil && m.Obj.GetName() == "" {
				t.Fatalf("manifest %d decoded without a name", i)
			}
		}
		seen := map[int]int{}
		for _, m := range applyOrder(decoded) {
			seen[m.Ordinal]++
		}
		for i := range ms {
			if seen[i] != 1 {
				t.Fatalf("apply order holds manifest %d %d times, want once", i, seen[i])
			}
		}
	})
}
