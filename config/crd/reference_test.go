package crd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// ReferenceEnv overrides where the reference CRDs are read from: a folder whose *.yaml files
// (searched recursively) replace every source below.
const ReferenceEnv = "FLOTILLA_REFERENCE_CRDS"

// referenceSource is a set of reference CRDs: the files named *suffix in folders inside a Go
// module that publishes them at the version pinned in go.mod, or (module "") inside this checkout.
type referenceSource struct {
	module  string
	folders []string
	suffix  string
}

// referenceSources are OCM's published CRDs. The modules are kept required by
// reference_modules_test.go; testdata/reference/README.md names the source of the rest.
var referenceSources = []referenceSource{
	// The addon CRDs of addon/v1beta1 serve v1alpha1 and v1beta1; addon/v1alpha1 adds
	// AddOnTemplate, served at v1alpha1 only.
	{module: "open-cluster-management.io/api", folders: []string{"addon/v1beta1", "cluster", "work"}, suffix: ".crd.yaml"},
	{module: "open-cluster-management.io/api", folders: []string{"addon/v1alpha1"}, suffix: "addontemplates.crd.yaml"},
	{module: "sigs.k8s.io/cluster-inventory-api", folders: []string{"config/crd/bases"}, suffix: ".yaml"},
	{folders: []string{"config/crd/testdata/reference"}, suffix: ".yaml"},
}

func referenceCRDs(t *testing.T) []*apiextv1.CustomResourceDefinition {
	if dir := os.Getenv(ReferenceEnv); dir != "" {
		return readCRDs(t, yamlFiles(t, dir, ".yaml"), dir)
	}
	var out []*apiextv1.CustomResourceDefinition
	for _, src := range referenceSources {
		root := repoRoot(t)
		if src.module != "" {
			root = moduleDir(t, src.module)
		}
		for _, f := range src.folders {
			dir := filepath.Join(root, f)
			out = append(out, readCRDs(t, yamlFiles(t, dir, src.suffix), dir)...)
		}
	}
	return out
}

// moduleDir is the module's folder in the module cache, at the version go.mod requires. It never
// uses the network: the test's build already downloaded the module.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("locating the reference CRDs of %s: go list -m: %v %s\n\t"+
			"run `go mod download %s` (it is required in go.mod), or set %s to a folder holding the CRDs",
			module, err, strings.TrimSpace(stderr.String()), module, ReferenceEnv)
	}
	return dir
}

func yamlFiles(t *testing.T, dir, suffix string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, suffix) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the reference CRDs: %v", err)
	}
	return paths
}

func readCRDs(t *testing.T, paths []string, dir string) []*apiextv1.CustomResourceDefinition {
	t.Helper()
	if len(paths) == 0 {
		t.Fatalf("no reference CRDs in %s: the compatibility test needs OCM's published CRDs there, "+
			"or set %s to a folder holding them", dir, ReferenceEnv)
	}
	var out []*apiextv1.CustomResourceDefinition
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("reference CRD %s: %v", p, err)
		}
		if crd.Spec.Names.Kind == "" {
			t.Fatalf("reference CRD %s: no spec.names.kind: is it a CustomResourceDefinition?", p)
		}
		out = append(out, crd)
	}
	return out
}
