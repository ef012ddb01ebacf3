package crdcompat

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Difference is one incompatibility of ours with the reference.
type Difference struct {
	// Kind is the reference CRD's kind, for example "Placement".
	Kind string
	// Path locates the field: "spec.predicates[].requiredClusterSelector" ("[]" is a list item,
	// "{}" a map value); empty for differences of the CRD itself.
	Path string
	// What names the property that differs: missing, type, enum, list-type, list-map-keys,
	// map-type, int-or-string, preserve-unknown-fields, embedded-resource, group, plural,
	// singular, short-names, scope, versions.
	What string
	Ref  string
	Ours string
}

// Key identifies the difference in docs/compatibility.md.
func (d Difference) Key() string { return d.Kind + " " + d.Path + " " + d.What }

func (d Difference) String() string {
	where := d.Path
	if where == "" {
		where = "(the CRD)"
	}
	return fmt.Sprintf("%s %s: %s differs: reference %s, ours %s", d.Kind, where, d.What, d.Ref, d.Ours)
}

// Compare lists the differences of ours from ref, sorted by path.
func Compare(ref, ours *apiextv1.CustomResourceDefinition) []Difference {
	kind := ref.Spec.Names.Kind
	var diffs []Difference
	add := func(path, what string, r, o any) {
		diffs = append(diffs, Difference{Kind: kind, Path: path, What: what, Ref: show(r), Ours: show(o)})
	}
	if ref.Spec.Group != ours.Spec.Group {
		add("", "group", ref.Spec.Group, ours.Spec.Group)
	}
	rn, on := ref.Spec.Names, ours.Spec.Names
	if rn.Kind != on.Kind {
		add("", "kind", rn.Kind, on.Kind)
	}
	if rn.Plural != on.Plural {
		add("", "plural", rn.Plural, on.Plural)
	}
	if rn.Singular != on.Singular {
		add("", "singular", rn.Singular, on.Singular)
	}
	if !sameSet(rn.ShortNames, on.ShortNames) {
		add("", "short-names", rn.ShortNames, on.ShortNames)
	}
	if ref.Spec.Scope != ours.Spec.Scope {
		add("", "scope", ref.Spec.Scope, ours.Spec.Scope)
	}
	if !sameSet(served(ref), served(ours)) {
		add("", "versions", served(ref), served(ours))
	}
	for _, rv := range ref.Spec.Versions {
		if !rv.Served || rv.Schema == nil || rv.Schema.OpenAPIV3Schema == nil {
			continue
		}
		ov := version(ours, rv.Name)
		if ov == nil || ov.Schema == nil || ov.Schema.OpenAPIV3Schema == nil {
			continue // reported as a versions difference
		}
		w := walker{add: add}
		w.walk("", rv.Schema.OpenAPIV3Schema, ov.Schema.OpenAPIV3Schema)
	}
	sort.SliceStable(diffs, func(i, j int) bool { return diffs[i].Path < diffs[j].Path })
	return diffs
}

type walker struct {
	add func(path, what string, ref, ours any)
}

func (w walker) walk(path string, ref, ours *apiextv1.JSONSchemaProps) {
	if ref.Type != ours.Type {
		w.add(path, "type", ref.Type, ours.Type)
	}
	if !sameSet(enumValues(ref.Enum), enumValues(ours.Enum)) {
		w.add(path, "enum", enumValues(ref.Enum), enumValues(ours.Enum))
	}
	if str(ref.XListType) != str(ours.XListType) {
		w.add(path, "list-type", str(ref.XListType), str(ours.XListType))
	}
	if !sameSet(ref.XListMapKeys, ours.XListMapKeys) {
		w.add(path, "list-map-keys", ref.XListMapKeys, ours.XListMapKeys)
	}
	if str(ref.XMapType) != str(ours.XMapType) {
		w.add(path, "map-type", str(ref.XMapType), str(ours.XMapType))
	}
	if ref.XIntOrString != ours.XIntOrString {
		w.add(path, "int-or-string", ref.XIntOrString, ours.XIntOrString)
	}
	if boolp(ref.XPreserveUnknownFields) != boolp(ours.XPreserveUnknownFields) {
		w.add(path, "preserve-unknown-fields", boolp(ref.XPreserveUnknownFields), boolp(ours.XPreserveUnknownFields))
	}
	if ref.XEmbeddedResource != ours.XEmbeddedResource {
		w.add(path, "embedded-resource", ref.XEmbeddedResource, ours.XEmbeddedResource)
	}
	if path == "metadata" {
		return // ObjectMeta: the API server owns its schema
	}
	for _, name := range sortedKeys(ref.Properties) {
		rp := ref.Properties[name]
		child := join(path, name)
		op, ok := ours.Properties[name]
		if !ok {
			w.add(child, "missing", "present", "absent")
			continue
		}
		w.walk(child, &rp, &op)
	}
	if ref.Items != nil && ref.Items.Schema != nil {
		if ours.Items == nil || ours.Items.Schema == nil {
			w.add(path+"[]", "missing", "present", "absent")
		} else {
			w.walk(path+"[]", ref.Items.Schema, ours.Items.Schema)
		}
	}
	if ref.AdditionalProperties != nil && ref.AdditionalProperties.Schema != nil {
		if ours.AdditionalProperties == nil || ours.AdditionalProperties.Schema == nil {
			w.add(path+"{}", "missing", "present", "absent")
		} else {
			w.walk(path+"{}", ref.AdditionalProperties.Schema, ours.AdditionalProperties.Schema)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func served(crd *apiextv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	return out
}

func version(crd *apiextv1.CustomResourceDefinition, name string) *apiextv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func enumValues(vs []apiextv1.JSON) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v.Raw)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func sortedKeys(m map[string]apiextv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func boolp(b *bool) bool { return b != nil && *b }

func show(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "(none)"
		}
		return x
	case []string:
		if len(x) == 0 {
			return "(none)"
		}
		return "[" + strings.Join(x, " ") + "]"
	case apiextv1.ResourceScope:
		return string(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
