package addonconversion

import "testing"

// BenchmarkConvert converts the example ManagedClusterAddOn (every field set) to v1beta1 and
// back, as the API server asks for each object of a list read at the other version.
func BenchmarkConvert(b *testing.B) {
	var obj []byte
	for _, e := range examples(b) {
		if e.h.APIVersion == V1alpha1 && e.h.Kind == "ManagedClusterAddOn" {
			obj = e.json
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		beta, err := Convert(obj, V1beta1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Convert(beta, V1alpha1); err != nil {
			b.Fatal(err)
		}
	}
}
