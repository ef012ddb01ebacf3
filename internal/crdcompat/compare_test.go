package crdcompat

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func crd(mutate func(*apiextv1.CustomResourceDefinition)) *apiextv1.CustomResourceDefinition {
	c := &apiextv1.CustomResourceDefinition{Spec: apiextv1.CustomResourceDefinitionSpec{
		Group: "cluster.open-cluster-management.io",
		Names: apiextv1.CustomResourceDefinitionNames{Kind: "Thing", Plural: "things", Singular: "thing", ShortNames: []string{"th"}},
		Scope: apiextv1.NamespaceScoped,
		Versions: []apiextv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
						"mode": {Type: "string", Enum: []apiextv1.JSON{{Raw: []byte(`"A"`)}, {Raw: []byte(`"B"`)}}},
						"items": {
							Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"name"},
							Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{
								Type:       "object",
								Properties: map[string]apiextv1.JSONSchemaProps{"name": {Type: "string"}},
							}},
						},
						"labels": {Type: "object", AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{
							Schema: &apiextv1.JSONSchemaProps{Type: "string"},
						}},
					}},
				},
			}},
		}},
	}}
	if mutate != nil {
		mutate(c)
	}
	return c
}

func spec(c *apiextv1.CustomResourceDefinition) map[string]apiextv1.JSONSchemaProps {
	return c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
}

func TestCompare(t *testing.T) {
	cases := map[string]struct {
		ours func(*apiextv1.CustomResourceDefinition)
		want []Difference
	}{
		"identical": {},
		"additions are allowed": {
			ours: func(c *apiextv1.CustomResourceDefinition) {
				spec(c)["extra"] = apiextv1.JSONSchemaProps{Type: "integer"}
				c.Spec.Names.Categories = []string{"flotilla"}
			},
		},
		"names, scope and versions": {
			ours: func(c *apiextv1.CustomResourceDefinition) {
				c.Spec.Names.Plural = "thingz"
				c.Spec.Names.ShortNames = nil
				c.Spec.Scope = apiextv1.ClusterScoped
				c.Spec.Versions[0].Name = "v2"
			},
			want: []Difference{
				{Kind: "Thing", What: "plural", Ref: "things", Ours: "thingz"},
				{Kind: "Thing", What: "short-names", Ref: "[th]", Ours: "(none)"},
				{Kind: "Thing", What: "scope", Ref: "Namespaced", Ours: "Cluster"},
				{Kind: "Thing", What: "versions", Ref: "[v1]", Ours: "[v2]"},
			},
		},
		"missing field, type, enum, list and map": {
			ours: func(c *apiextv1.CustomResourceDefinition) {
				s := spec(c)
				s["mode"] = apiextv1.JSONSchemaProps{Type: "string", Enum: []apiextv1.JSON{{Raw: []byte(`"A"`)}}}
				items := s["items"]
				items.XListType = ptr.To("atomic")
				items.XListMapKeys = nil
				items.Items.Schema.Properties = map[string]apiextv1.JSONSchemaProps{"name": {Type: "integer"}}
				s["items"] = items
				delete(s, "labels")
			},
			want: []Difference{
				{Kind: "Thing", Path: "spec.items", What: "list-type", Ref: "map", Ours: "atomic"},
				{Kind: "Thing", Path: "spec.items", What: "list-map-keys", Ref: "[name]", Ours: "(none)"},
				{Kind: "Thing", Path: "spec.items[].name", What: "type", Ref: "string", Ours: "integer"},
				{Kind: "Thing", Path: "spec.labels", What: "missing", Ref: "present", Ours: "absent"},
				{Kind: "Thing", Path: "spec.mode", What: "enum", Ref: `["A" "B"]`, Ours: `["A"]`},
			},
		},
		"map values": {
			ours: func(c *apiextv1.CustomResourceDefinition) {
				spec(c)["labels"] = apiextv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{
					Schema: &apiextv1.JSONSchemaProps{Type: "integer"},
				}}
			},
			want: []Difference{{Kind: "Thing", Path: "spec.labels{}", What: "type", Ref: "string", Ours: "integer"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Compare(crd(nil), crd(tc.ours))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}
