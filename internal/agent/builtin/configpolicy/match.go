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
	d := differences(tmpl, obj, fields, metadata, 1)
	if len(d) == 0 {
		return true, ""
	}
	return false, d[0]
}

// differences lists, field by field, how obj differs from what tmpl says (at most limit of
// them, in the template's field order): what `flotilla explain policy` shows.
func differences(tmpl, obj map[string]any, fields, metadata only, limit int) []string {
	d := &diffs{limit: limit}
	for _, k := range slices.Sorted(maps.Keys(tmpl)) {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			tm, _ := tmpl[k].(map[string]any)
			om, _ := obj[k].(map[string]any)
			for _, mk := range []string{"labels", "annotations"} {
				if v, ok := tm[mk]; ok {
					d.compare(v, om[mk], metadata, "metadata."+mk)
				}
			}
			continue
		}
		d.compare(tmpl[k], obj[k], fields, k)
	}
	return d.found
}

// diffs collects differences up to limit.
type diffs struct {
	limit int
	found []string
}

func (d *diffs) full() bool { return len(d.found) >= d.limit }

func (d *diffs) add(format string, args ...any) {
	if !d.full() {
		d.found = append(d.found, fmt.Sprintf(format, args...))
	}
}

// compare notes how the object's value o differs from the template's t at path.
func (d *diffs) compare(t, o any, exact only, path string) {
	if d.full() {
		return
	}
	switch tv := t.(type) {
	case map[string]any:
		ov, ok := o.(map[string]any)
		if !ok {
			d.add("%s is %s, want an object", path, describe(o))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(tv)) {
			d.compare(tv[k], ov[k], exact, path+"."+k)
		}
		if exact {
			for _, k := range slices.Sorted(maps.Keys(ov)) {
				if _, ok := tv[k]; !ok {
					d.add("%s.%s is set, and mustonlyhave lists no such field", path, k)
				}
			}
		}
	case []any:
		ov, ok := o.([]any)
		if !ok {
			d.add("%s is %s, want a list", path, describe(o))
			return
		}
		if exact {
			if len(ov) != len(tv) {
				d.add("%s has %d items, want %d", path, len(ov), len(tv))
				return
			}
			for i := range tv {
				d.compare(tv[i], ov[i], exact, fmt.Sprintf("%s[%d]", path, i))
			}
			return
		}
		for i, item := range tv {
			if slices.ContainsFunc(ov, func(oi any) bool { ok, _ := equalValue(item, oi, exact, path); return ok }) {
				continue
			}
			// No object item has it: the differences from the object's closest item.
			var closest []string
			for j, oi := range ov {
				dd := &diffs{limit: d.limit}
				dd.compare(item, oi, exact, fmt.Sprintf("%s[%d]", path, j))
				if closest == nil || len(dd.found) < len(closest) {
					closest = dd.found
				}
			}
			if len(closest) == 0 {
				d.add("%s[%d] is in no item of the object's %s, which has none", path, i, path)
			}
			for _, f := range closest {
				d.add("%s", f)
			}
		}
	case nil:
		if o != nil {
			d.add("%s is %s, want it unset", path, describe(o))
		}
	default:
		if !fieldmatch.ScalarEqual(o, t) {
			d.add("%s is %s, want %v", path, describe(o), t)
		}
	}
}

// equalValue compares a template's value with an object's at path, with the first difference.
func equalValue(t, o any, exact only, path string) (bool, string) {
	d := &diffs{limit: 1}
	d.compare(t, o, exact, path)
	if len(d.found) == 0 {
		return true, ""
	}
	return false, d.found[0]
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
