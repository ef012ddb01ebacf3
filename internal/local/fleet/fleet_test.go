package fleet

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultFleet(t *testing.T) {
	f := Default()
	type pool struct {
		Cluster, Model string
		Nodes, GPUs    int
	}
	var got []pool
	for _, c := range f.Clusters {
		for _, np := range c.NodePools {
			got = append(got, pool{c.Name, np.GPU.Model, np.Count, np.GPU.Count})
		}
	}
	want := []pool{
		{"gpu-east", "NVIDIA-H100-80GB-HBM3", 4, 8},
		{"gpu-west", "NVIDIA-A100-SXM4-80GB", 2, 8},
		{"edge-1", "Tesla-T4", 2, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default fleet pools (-want +got):\n%s", diff)
	}
	if got := f.Clusters[1].Labels["region"]; got != "eu" {
		t.Errorf("gpu-west region label = %q, want eu", got)
	}
}

const header = "apiVersion: dev.flotilla.io/v1alpha1\nkind: Fleet\n"

func TestParseRejectsBadFleets(t *testing.T) {
	cases := map[string]struct {
		yaml string
		// wantErrs are substrings the error must hold: the field path and the reason.
		wantErrs []string
	}{
		"not YAML": {
			yaml:     "clusters: [",
			wantErrs: []string{"fleet file test.yaml is not a valid fleet"},
		},
		"unknown field": {
			yaml:     header + "clusters:\n- name: a\n  nodepools: []\n",
			wantErrs: []string{`unknown field "clusters[0].nodepools"`},
		},
		"wrong kind": {
			yaml:     "apiVersion: v1\nkind: Pod\nclusters:\n- name: a\n",
			wantErrs: []string{"apiVersion: Invalid value: \"v1\": must be dev.flotilla.io/v1alpha1", "kind: Invalid value: \"Pod\": must be Fleet"},
		},
		"unknown and repeated components in with": {
			yaml:     header + "with: [kueue, volcano, kueue]\nclusters:\n- name: a\n",
			wantErrs: []string{`with[1]: Unsupported value: "volcano": supported values: "kueue"`, `with[2]: Duplicate value: "kueue"`},
		},
		"no clusters": {
			yaml:     header,
			wantErrs: []string{"clusters: Required value: list at least one spoke cluster"},
		},
		"bad and taken names": {
			yaml: header + "clusters:\n- name: GPU_East\n- name: hub\n- name: a\n- name: a\n- labels: {x: z}\n",
			wantErrs: []string{
				`clusters[0].name: Invalid value: "GPU_East": a lowercase RFC 1123 label`,
				`clusters[1].name: Invalid value: "hub": "hub" is the hub cluster's name`,
				`clusters[3].name: Duplicate value: "a"`,
				`clusters[4].name: Required value`,
			},
		},
		"bad labels and claims": {
			yaml: header + "clusters:\n- name: a\n  labels: {\"bad key!\": x, region: \"not ok\"}\n  claims: {\"Bad_Claim\": x}\n",
			wantErrs: []string{
				`clusters[0].labels: Invalid value: "bad key!"`,
				`clusters[0].labels: Invalid value: "not ok"`,
				`clusters[0].claims[Bad_Claim]: Invalid value: "Bad_Claim": claim name`,
			},
		},
		"claim value too long": {
			yaml:     header + "clusters:\n- name: a\n  claims: {c: " + strings.Repeat("x", MaxClaimValueLen+1) + "}\n",
			wantErrs: []string{"clusters[0].claims[c]: Too long: may not be more than 1024 bytes"},
		},
		"bad node pools": {
			yaml: header + `clusters:
- name: a
  nodePools:
  - name: h100
    count: 0
    gpu: {model: "", count: -2}
    cpu: "-1"
    memory: 0
  - name: h100
    count: 1000
    gpu: {model: "has spaces", count: 8}
`,
			wantErrs: []string{
				"clusters[0].nodePools[0].count: Invalid value: 0: must be between 1 and 500",
				"clusters[0].nodePools[0].gpu.count: Invalid value: -2: GPUs per node must be between 1 and 64",
				"clusters[0].nodePools[0].gpu.model: Required value",
				`clusters[0].nodePools[0].cpu: Invalid value: "-1": must be greater than zero`,
				`clusters[0].nodePools[0].memory: Invalid value: "0": must be greater than zero`,
				`clusters[0].nodePools[1].name: Duplicate value: "h100"`,
				"clusters[0].nodePools[1].count: Invalid value: 1000",
				`clusters[0].nodePools[1].gpu.model: Invalid value: "has spaces": becomes the nvidia.com/gpu.product label`,
			},
		},
		"YAML boolean where a string belongs": {
			yaml:     header + "clusters:\n- name: a\n  labels: {gpu: yes}\n",
			wantErrs: []string{"cannot unmarshal bool", `quote the value`},
		},
		"bad quantity": {
			yaml:     header + "clusters:\n- name: a\n  nodePools:\n  - {name: p, count: 1, memory: lots}\n",
			wantErrs: []string{"fleet file test.yaml is not a valid fleet", "quantities must match the regular expression"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("test.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("Parse accepted a bad fleet file")
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not mention %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestParseAcceptsMinimalFleet(t *testing.T) {
	f, err := Parse("min.yaml", []byte(header+"clusters:\n- name: \"n\"\n  nodePools:\n  - {name: cpu, count: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Clusters[0].NodePools[0].LocalNodePool()
	if got.CPU.Cmp(DefaultCPU) != 0 || got.Memory.Cmp(DefaultMemory) != 0 || got.GPUs != 0 {
		t.Errorf("defaults not applied: cpu=%s memory=%s gpus=%d", got.CPU.String(), got.Memory.String(), got.GPUs)
	}
	if f.Has(WithKueue) {
		t.Errorf("a fleet without with runs kueue")
	}
}

func TestParseAcceptsWithKueue(t *testing.T) {
	f, err := Parse("kueue.yaml", []byte(header+"with: [kueue]\nclusters:\n- name: a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Has(WithKueue) {
		t.Errorf("with: [kueue] does not run kueue: %+v", f.With)
	}
}
