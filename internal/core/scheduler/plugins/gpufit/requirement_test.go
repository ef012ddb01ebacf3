package gpufit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParse(t *testing.T) {
	q := resource.MustParse
	cases := map[string]struct {
		value   string
		want    Requirement
		wantErr string // a part of the error; "" for none
	}{
		"gang with model": {value: "model=NVIDIA-H100-80GB-HBM3,perNode=8,nodes=4",
			want: Requirement{Resource: "nvidia.com/gpu", Model: "NVIDIA-H100-80GB-HBM3", PerNode: q("8"), Nodes: 4}},
		"perNode alone means one node":    {value: "perNode=8", want: Requirement{Resource: "nvidia.com/gpu", PerNode: q("8"), Nodes: 1}},
		"nodes alone means one free each": {value: "nodes=3", want: Requirement{Resource: "nvidia.com/gpu", PerNode: q("1"), Nodes: 3}},
		"total of any model":              {value: "total=32", want: Requirement{Resource: "nvidia.com/gpu", Total: q("32")}},
		"total and gang, spaces allowed": {value: " total=32 , perNode=8, nodes=2",
			want: Requirement{Resource: "nvidia.com/gpu", PerNode: q("8"), Nodes: 2, Total: q("32")}},
		"another resource": {value: "resource=google.com/tpu,model=tpu-v5-lite-podslice,perNode=4",
			want: Requirement{Resource: "google.com/tpu", Model: "tpu-v5-lite-podslice", PerNode: q("4"), Nodes: 1}},
		"empty":            {value: "", wantErr: `"" has an empty item`},
		"model only":       {value: "model=NVIDIA-A100", wantErr: "asks for nothing; add perNode="},
		"not key=value":    {value: "perNode", wantErr: `"perNode" is not key=value (keys: resource, model, perNode, nodes, total)`},
		"unknown key":      {value: "gpus=8", wantErr: `unknown key "gpus"`},
		"twice":            {value: "perNode=8,perNode=4", wantErr: "key perNode is given twice"},
		"bad perNode":      {value: "perNode=eight", wantErr: `key perNode is "eight"; it must be a positive amount`},
		"zero total":       {value: "total=0", wantErr: `key total is "0"; it must be a positive amount`},
		"fractional nodes": {value: "perNode=8,nodes=1.5", wantErr: `key nodes is "1.5"; it must be a positive whole number`},
		"negative nodes":   {value: "nodes=-1", wantErr: `key nodes is "-1"`},
		"empty model":      {value: "model=,perNode=1", wantErr: "key model is empty"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), AnnotationField) {
					t.Fatalf("Parse(%q) error = %v, want one naming %s with %q", tc.value, err, AnnotationField, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", tc.value, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.value, diff)
			}
			// String gives back an annotation that parses to the same requirement.
			again, err := Parse(got.String())
			if err != nil {
				t.Fatalf("Parse(String() = %q) error = %v", got.String(), err)
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("Parse(String()) (-want +got):\n%s", diff)
			}
		})
	}
}
