package crd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaulterFor(t *testing.T) {
	c, err := Named("configurationpolicies.policy.open-cluster-management.io")
	if err != nil {
		t.Fatal(err)
	}
	def, err := DefaulterFor(c, "v1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{{
		name: "unset fields get the schema's defaults, nested ones too",
		in: map[string]any{"spec": map[string]any{"object-templates": []any{
			map[string]any{"complianceType": "musthave", "objectDefinition": map[string]any{"kind": "ConfigMap"}}}}},
		want: map[string]any{"spec": map[string]any{"remediationAction": "inform", "pruneObjectBehavior": "None", "object-templates": []any{
			map[string]any{"complianceType": "musthave", "recreateOption": "None", "objectDefinition": map[string]any{"kind": "ConfigMap"}}}}},
	}, {
		name: "set fields are kept",
		in:   map[string]any{"spec": map[string]any{"remediationAction": "enforce", "pruneObjectBehavior": "DeleteAll"}},
		want: map[string]any{"spec": map[string]any{"remediationAction": "enforce", "pruneObjectBehavior": "DeleteAll"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def(tt.in)
			if d := cmp.Diff(tt.want, tt.in); d != "" {
				t.Errorf("defaulted (-want +got):\n%s", d)
			}
		})
	}
	if _, err := DefaulterFor(c, "v9"); err == nil {
		t.Error("a version the CRD has not: no error")
	}
}
