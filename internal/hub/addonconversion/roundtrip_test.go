package addonconversion

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

// exampleFiles hold every example of the converted kinds: the API examples of the checkout
// (v1alpha1) and this package's v1beta1 ones.
var exampleFiles = []string{
	"../../../examples/api/clustermanagementaddon.yaml",
	"../../../examples/api/managedclusteraddon.yaml",
	"../../../examples/api/addondeploymentconfig.yaml",
	"testdata/v1beta1.yaml",
}

type example struct {
	name string
	json []byte
	h    header
}

func examples(t testing.TB) []example {
	t.Helper()
	var out []example
	for _, path := range exampleFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			var h header
			if err := json.Unmarshal(j, &h); err != nil || h.Kind == "" {
				continue // comments only
			}
			if !slices.Contains(Kinds, h.Kind) {
				t.Fatalf("%s: kind %s is not converted", path, h.Kind)
			}
			out = append(out, example{name: filepath.Base(path) + "/" + h.APIVersion + "/" + h.Kind, json: j, h: h})
		}
	}
	seen := map[string]bool{}
	for _, e := range out {
		seen[e.h.APIVersion+" "+e.h.Kind] = true
	}
	for _, v := range []string{V1alpha1, V1beta1} {
		for _, k := range Kinds {
			if !seen[v+" "+k] {
				t.Fatalf("no example of %s %s in %v", v, k, exampleFiles)
			}
		}
	}
	return out
}

// wire is obj as the API server sees it: JSON with empty lists and nulls dropped.
func wire(t *testing.T, obj any) any {
	t.Helper()
	if b, ok := obj.([]byte); ok {
		obj = json.RawMessage(b)
	}
	n, err := normalJSON(obj)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// typed decodes an example into its Go type and encodes it again.
func typed(t *testing.T, e example) []byte {
	t.Helper()
	var obj any
	switch e.h.APIVersion + " " + e.h.Kind {
	case V1alpha1 + " ClusterManagementAddOn":
		obj = &v1alpha1.ClusterManagementAddOn{}
	case V1alpha1 + " ManagedClusterAddOn":
		obj = &v1alpha1.ManagedClusterAddOn{}
	case V1alpha1 + " AddOnDeploymentConfig":
		obj = &v1alpha1.AddOnDeploymentConfig{}
	case V1beta1 + " ClusterManagementAddOn":
		obj = &v1beta1.ClusterManagementAddOn{}
	case V1beta1 + " ManagedClusterAddOn":
		obj = &v1beta1.ManagedClusterAddOn{}
	case V1beta1 + " AddOnDeploymentConfig":
		obj = &v1beta1.AddOnDeploymentConfig{}
	}
	if err := json.Unmarshal(e.json, obj); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func other(v string) string {
	if v == V1alpha1 {
		return V1beta1
	}
	return V1alpha1
}

// TestExamplesRoundTrip: every example converted to the other version and back is the example,
// and the converted object converted back and forth again is the converted object.
func TestExamplesRoundTrip(t *testing.T) {
	for _, e := range examples(t) {
		t.Run(e.name, func(t *testing.T) {
			// The Go types know every field of the example: otherwise the round trip could
			// drop a field on decoding and still look lossless.
			if diff := cmp.Diff(wire(t, e.json), wire(t, typed(t, e))); diff != "" {
				t.Fatalf("the Go types drop fields of the example (-example +decoded):\n%s", diff)
			}
			mid, err := Convert(e.json, other(e.h.APIVersion))
			if err != nil {
				t.Fatal(err)
			}
			back, err := Convert(mid, e.h.APIVersion)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, e.json), wire(t, back)); diff != "" {
				t.Errorf("%s -> %s -> %s (-want +got):\n%s", e.h.APIVersion, other(e.h.APIVersion), e.h.APIVersion, diff)
			}
			again, err := Convert(back, other(e.h.APIVersion))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, mid), wire(t, again)); diff != "" {
				t.Errorf("%s -> %s -> %s (-want +got):\n%s", other(e.h.APIVersion), e.h.APIVersion, other(e.h.APIVersion), diff)
			}
		})
	}
}
