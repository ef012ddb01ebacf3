//go:build integration

package api

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// addToScheme registers the API groups whose examples are checked; each group's file adds its own.
var addToScheme []func(*runtime.Scheme) error

// TestExamplesRoundTrip creates every example in examples/api on the hub and reads it back: the
// server must keep every field (no pruning, no defaulting over a set value), and decoding into
// the Go type and encoding again must keep every field too.
func TestExamplesRoundTrip(t *testing.T) {
	dc, mapper := clients(t)
	env := testenv.Start(t, testenv.Options{CRDs: true})
	ns := env.Namespace(t, env.Hub)
	scheme := runtime.NewScheme()
	for _, add := range addToScheme {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "api", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in examples/api (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := parse(t, file, string(data))
			if _, ok := want.Object["spec"]; !ok && !strings.Contains(string(data), "status:") && len(want.Object) <= 3 {
				t.Fatalf("%s sets no fields", file)
			}

			// Through the Go type: decoding and encoding again must not lose a field.
			obj, err := scheme.New(want.GroupVersionKind())
			if err != nil {
				t.Fatalf("no Go type for %s: %v", want.GroupVersionKind(), err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(want.Object, obj, true); err != nil {
				t.Fatalf("the Go type does not take every field of the example: %v", err)
			}
			typed, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(normalise(t, want.Object), normalise(t, typed)); diff != "" {
				t.Errorf("Go type round trip changed the object (-example +typed):\n%s", diff)
			}

			// Through the API server.
			ctx := context.Background()
			r := resourceFor(t, dc, mapper, want.DeepCopy(), ns)
			in := want.DeepCopy()
			if in.GetNamespace() == "" && r != nil {
				in.SetNamespace(ns)
			}
			got, err := create(ctx, r, in)
			if err != nil {
				t.Fatalf("creating the example: %v", err)
			}
			t.Cleanup(func() { _ = r.Delete(context.Background(), got.GetName(), metav1.DeleteOptions{}) })
			got, err = r.Get(ctx, got.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Every top-level field but the object's identity: spec and status, and the data of
			// kinds that keep it at the top level (KEP-5313 PlacementDecision).
			for _, field := range topLevelFields(want.Object, got.Object) {
				if diff := cmp.Diff(normalise(t, want.Object[field]), normalise(t, got.Object[field])); diff != "" {
					t.Errorf("%s read back differs (-example +server):\n%s", field, diff)
				}
			}
			for _, f := range [][]string{{"metadata", "labels"}, {"metadata", "annotations"}} {
				w, _, _ := unstructured.NestedFieldNoCopy(want.Object, f...)
				g, _, _ := unstructured.NestedFieldNoCopy(got.Object, f...)
				if diff := cmp.Diff(normalise(t, w), normalise(t, g)); diff != "" {
					t.Errorf("%s read back differs (-example +server):\n%s", strings.Join(f, "."), diff)
				}
			}
		})
	}
}

// topLevelFields lists, sorted, the top-level fields of the objects other than apiVersion, kind
// and metadata, always including spec and status.
func topLevelFields(objs ...map[string]any) []string {
	set := map[string]bool{"spec": true, "status": true}
	for _, o := range objs {
		for k := range o {
			set[k] = true
		}
	}
	delete(set, "apiVersion")
	delete(set, "kind")
	delete(set, "metadata")
	return slices.Sorted(maps.Keys(set))
}

// normalise passes a value through JSON so that numbers and empty values compare alike.
func normalise(t *testing.T, v any) any {
	t.Helper()
	if m, ok := v.(map[string]any); ok {
		m = deleteKeys(m, "metadata", "creationTimestamp")
		v = m
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// deleteKeys returns m without m[parent][key], which the server or the Go types fill in.
func deleteKeys(m map[string]any, parent, key string) map[string]any {
	p, ok := m[parent].(map[string]any)
	if !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	cp := make(map[string]any, len(p))
	for k, v := range p {
		if k != key {
			cp[k] = v
		}
	}
	if len(cp) == 0 {
		delete(out, parent)
	} else {
		out[parent] = cp
	}
	return out
}
