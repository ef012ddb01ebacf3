package configpolicy

import (
	"fmt"
	"maps"
	"slices"

	"github.com/flotilla/flotilla/internal/agent/fieldmatch"
)

// Comparing an object with its template, as OCM's config-policy-controller does. A template
// lists only the fields it cares about: the object's other fields (the API server's defaults,
// status, what other controllers write) never make it non-compliant.
//
//   - musthave: every field of the template has the same value in the object; a map is
//     compared key by key, recursively; a list is matched item by item, each template item by
//     some object item (so an object may have more items, in any order).
//   - mustonlyhave: as musthave, but a list must have exactly the template's items (in order),
//     and a map exactly the template's keys.
//
// Labels and annotations follow metadataComplianceType (complianceType when unset); the other
// metadata fields (name, namespace) choose the object and are not compared.

// only says whether a comparison is mustonlyhave.
type only bool

// matches reports whether obj has what tmpl says, with the first difference found.
func matches(tmpl, obj map[string]any, fields, metadata only) (bool, string) {
	for _, k := range slices.Sorted(maps.Keys(tmpl)) {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			tm, _ := tmpl[k].(map[string]any)
			om, _ := obj[k].(map[string]any)
			for _, mk := range []string{"labels", "annotations"} {
				if v, ok := tm[mk]; ok {
					if ok, why := equalValue(v, om[mk], metadata, "metadata."+mk); !ok {
						return false, why
					}
				}
			}
			continue
		}
		if ok, why := equalValue(tmpl[k], obj[k], fields, k); !ok {
			return false, why
		}
	}
	return true, ""
}

// equalValue compares a template's value with an object's at path.
func equalValue(t, o any, exact only, path string) (bool, string) {
	switch tv := t.(type) {
	case map[string]any:
		ov, ok := o.(map[string]any)
		if !ok {
			return false, fmt.Sprintf("%s is %s, want an object", path, describe(o))
		}
		for _, k := range slices.Sorted(maps.Keys(tv)) {
			if ok, why := equalValue(tv[k], ov[k], exact, path+"."+k); !ok {
				return false, why
			}
		}
		if exact {
			for _, k := range slices.Sorted(maps.Keys(ov)) {
				if _, ok := tv[k]; !ok {
					return false, fmt.Sprintf("%s.%s is set, and mustonlyhave lists no such field", path, k)
				}
			}
		}
		return true, ""
	case []any:
		ov, ok := o.([]any)
		if !ok {
			return false, fmt.Sprintf("%s is %s, want a list", path, describe(o))
		}
		if exact {
			if len(ov) != len(tv) {
				return false, fmt.Sprintf("%s has %d items, want %d", path, len(ov), len(tv))
			}
			for i := range tv {
				if ok, why := equalValue(tv[i], ov[i], exact, fmt.Sprintf("%s[%d]", path, i)); !ok {
					return false, why
				}
			}
			return true, ""
		}
		for i, item := range tv {
			if !slices.ContainsFunc(ov, func(oi any) bool { ok, _ := equalValue(item, oi, exact, path); return ok }) {
				return false, fmt.Sprintf("%s[%d] is in no item of the object's %s", path, i, path)
			}
		}
		return true, ""
	case nil:
		return o == nil, fmt.Sprintf("%s is %s, want it unset", path, describe(o))
	}
	if fieldmatch.ScalarEqual(o, t) {
		return true, ""
	}
	return false, fmt.Sprintf("%s is %s, want %v", path, describe(o), t)
}

func describe(v any) string {
	if v == nil {
		return "unset"
	}
	return fmt.Sprintf("%v", v)
}

// merge returns obj with tmpl's fields put in, as enforce writes it: musthave adds what is
// missing and keeps the rest (a list gains the template's items it lacks); mustonlyhave sets each
// listed field to the template's value.
func merge(tmpl, obj map[string]any, fields, metadata only) map[string]any {
	out := deepCopy(obj)
	for k, v := range tmpl {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			tm, _ := v.(map[string]any)
			om, _ := out[k].(map[string]any)
			if om == nil {
				om = map[string]any{}
				out[k] = om
			}
			for _, mk := range []string{"labels", "annotations"} {
				if mv, ok := tm[mk]; ok {
					om[mk] = mergeValue(mv, om[mk], metadata)
				}
			}
			continue
		}
		out[k] = mergeValue(v, out[k], fields)
	}
	return out
}

func mergeValue(t, o any, exact only) any {
	if exact {
		return deepCopyValue(t)
	}
	switch tv := t.(type) {
	case map[string]any:
		ov, ok := o.(map[string]any)
		if !ok {
			return deepCopyValue(t)
		}
		out := deepCopy(ov)
		for k, v := range tv {
			out[k] = mergeValue(v, ov[k], exact)
		}
		return out
	case []any:
		ov, ok := o.([]any)
		if !ok {
			return deepCopyValue(t)
		}
		out := deepCopyValue(ov).([]any)
		for _, item := range tv {
			if !slices.ContainsFunc(ov, func(oi any) bool { ok, _ := equalValue(item, oi, exact, ""); return ok }) {
				out = append(out, deepCopyValue(item))
			}
		}
		return out
	}
	return t
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return deepCopyValue(m).(map[string]any)
}

func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}
