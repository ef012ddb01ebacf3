package work

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla/flotilla/internal/agent/fieldmatch"
)

// matches reports whether the live object already has everything the desired one says: every
// field of desired (but metadata and status) is in live with the same value, and so are its
// labels and annotations. Fields the API server adds (defaults) do not count, so an agent that
// restarts finds its objects in place and writes nothing.
func matches(desired, live *unstructured.Unstructured) bool {
	for k, v := range desired.Object {
		if k == "metadata" || k == "status" || k == "apiVersion" || k == "kind" {
			continue
		}
		if !contains(live.Object[k], v) {
			return false
		}
	}
	return subsetMap(desired.GetLabels(), live.GetLabels()) && subsetMap(desired.GetAnnotations(), live.GetAnnotations())
}

func subsetMap(want, have map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// contains reports whether have holds want: maps by key (extra keys in have are fine), lists
// element by element with the same length, scalars equal (numbers compared as numbers).
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		for k, v := range w {
			if !contains(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return have == nil
	}
	// Numbers by value, quantities as the API server canonicalizes them.
	return fieldmatch.ScalarEqual(have, want)
}

// removePath deletes a field given as a JSONPath (".spec.replicas" or "spec.replicas") or a JSON
// pointer ("/spec/replicas") from obj, and reports whether it was there.
func removePath(obj map[string]any, path string) bool {
	fields := splitPath(path)
	if len(fields) == 0 {
		return false
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj, fields...); !found {
		return false
	}
	unstructured.RemoveNestedField(obj, fields...)
	return true
}

// hasPath reports whether obj has the field at path (see removePath).
func hasPath(obj map[string]any, path string) bool {
	fields := splitPath(path)
	if len(fields) == 0 {
		return false
	}
	_, found, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	return found
}

func splitPath(path string) []string {
	var parts []string
	if strings.HasPrefix(path, "/") {
		for _, p := range strings.Split(path[1:], "/") {
			parts = append(parts, strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~"))
		}
	} else {
		path = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(path, "{"), "}"), "$")
		for _, p := range strings.Split(strings.TrimPrefix(path, "."), ".") {
			if p != "" {
				parts = append(parts, p)
			}
		}
	}
	return parts
}
