package work

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// manifest is one manifest of a work, decoded.
type manifest struct {
	// Ordinal is the manifest's index in spec.workload.manifests.
	Ordinal int
	Obj     *unstructured.Unstructured
	// Err says why the manifest does not decode; Obj is nil then.
	Err error
}

// decode decodes a work's manifests. A manifest that does not decode, or lacks apiVersion, kind
// or name, carries its error: it fails alone.
func decode(ms []workv1.Manifest) []manifest {
	out := make([]manifest, len(ms))
	for i, m := range ms {
		out[i].Ordinal = i
		raw := m.Raw
		if len(raw) == 0 && m.Object != nil {
			b, err := json.Marshal(m.Object)
			if err != nil {
				out[i].Err = err
				continue
			}
			raw = b
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			out[i].Err = fmt.Errorf("manifest %d does not decode: %w", i, err)
			continue
		}
		if obj.GetName() == "" {
			out[i].Err = fmt.Errorf("manifest %d (%s) has no metadata.name", i, obj.GetKind())
			continue
		}
		out[i].Obj = obj
	}
	return out
}

// rank orders kinds for applying: Namespaces first, CRDs next (their objects need them), then
// everything else in the work's order.
func rank(m manifest) int {
	if m.Obj == nil {
		return 2
	}
	gvk := m.Obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Namespace":
		return 0
	case gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition":
		return 1
	}
	return 2
}

// applyOrder returns the manifests in the order to apply them: by rank, then by ordinal.
func applyOrder(ms []manifest) []manifest {
	out := append([]manifest(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}
