package crd

import (
	"encoding/json"
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Defaulter applies a CRD version's schema defaults to an object of its kind, given as JSON-like
// maps (runtime.DefaultUnstructuredConverter's form), as the API server does before it stores
// one: a property with a default that is absent (or null and not nullable) gets it, in objects,
// array items and map values at every depth. A client that compares what it wants with what it
// reads back compares the defaulted form, or it sees a difference that no write can remove.
type Defaulter func(obj map[string]any)

// DefaulterFor is the Defaulter of version of c.
func DefaulterFor(c *apiextv1.CustomResourceDefinition, version string) (Defaulter, error) {
	for _, v := range c.Spec.Versions {
		if v.Name != version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return func(map[string]any) {}, nil
		}
		s := v.Schema.OpenAPIV3Schema
		if err := checkDefaults(s, ""); err != nil {
			return nil, fmt.Errorf("CRD %s version %s: %w", c.Name, version, err)
		}
		return func(obj map[string]any) { applyDefaults(obj, s) }, nil
	}
	return nil, fmt.Errorf("CRD %s has no version %s", c.Name, version)
}

// checkDefaults makes sure that every default in s decodes, so applyDefaults cannot fail.
func checkDefaults(s *apiextv1.JSONSchemaProps, path string) error {
	for name, p := range s.Properties {
		if p.Default != nil {
			var v any
			if err := json.Unmarshal(p.Default.Raw, &v); err != nil {
				return fmt.Errorf("the default of %s.%s does not decode: %w", path, name, err)
			}
		}
		if err := checkDefaults(&p, path+"."+name); err != nil {
			return err
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		if err := checkDefaults(s.Items.Schema, path+"[]"); err != nil {
			return err
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return checkDefaults(s.AdditionalProperties.Schema, path+"{}")
	}
	return nil
}

// applyDefaults defaults x, a value of schema s.
func applyDefaults(x any, s *apiextv1.JSONSchemaProps) {
	switch x := x.(type) {
	case map[string]any:
		for name, p := range s.Properties {
			v, ok := x[name]
			if p.Default != nil && (!ok || (v == nil && !p.Nullable)) {
				var d any
				_ = json.Unmarshal(p.Default.Raw, &d) // checked by checkDefaults
				x[name] = d
			}
		}
		for name, v := range x {
			if p, ok := s.Properties[name]; ok {
				applyDefaults(v, &p)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				applyDefaults(v, s.AdditionalProperties.Schema)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, v := range x {
				applyDefaults(v, s.Items.Schema)
			}
		}
	}
}
