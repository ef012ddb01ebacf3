package crd

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/flotilla/flotilla/internal/crdcompat"
)

// repoRoot is the checkout's top folder (this file is config/crd/compat_test.go).
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the checkout")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// allowedDifferences reads the table of deliberate differences in docs/compatibility.md:
// rows "| Kind | field path | what differs | reason |".
func allowedDifferences(t *testing.T) map[string]string {
	path := filepath.Join(repoRoot(t), "docs", "compatibility.md")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading the table of deliberate differences: %v", err)
	}
	defer func() { _ = f.Close() }()
	allowed := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		cells := strings.Split(strings.Trim(strings.TrimSpace(s.Text()), "|"), "|")
		if len(cells) != 4 {
			continue
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		kind, fieldPath, what, reason := cells[0], cells[1], cells[2], cells[3]
		if kind == "kind" || strings.HasPrefix(kind, "---") {
			continue // header
		}
		if fieldPath == "-" {
			fieldPath = ""
		}
		if reason == "" {
			t.Errorf("docs/compatibility.md: the difference %q %q %q gives no reason", kind, fieldPath, what)
		}
		allowed[kind+" "+fieldPath+" "+what] = reason
	}
	return allowed
}

func TestCompatibleWithReferenceCRDs(t *testing.T) {
	ours, err := All()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*apiextv1.CustomResourceDefinition{}
	for _, c := range ours {
		byKey[c.Spec.Group+"/"+c.Spec.Names.Kind] = c
	}
	allowed := allowedDifferences(t)
	used := map[string]bool{}
	for _, ref := range referenceCRDs(t) {
		key := ref.Spec.Group + "/" + ref.Spec.Names.Kind
		// Named Kind.group, as kubectl names resources: a "/" would split the subtest name.
		t.Run(ref.Spec.Names.Kind+"."+ref.Spec.Group, func(t *testing.T) {
			our, ok := byKey[key]
			if !ok {
				t.Fatalf("no CRD for %s: add its types under api/ and run make generate", key)
			}
			for _, d := range crdcompat.Compare(ref, our) {
				if _, ok := allowed[d.Key()]; ok {
					used[d.Key()] = true
					continue
				}
				t.Errorf("%s\n\t(if deliberate, add a row to docs/compatibility.md: | %s | %s | %s | reason |)",
					d, d.Kind, orDash(d.Path), d.What)
			}
		})
	}
	var stale []string
	for k := range allowed {
		if !used[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("docs/compatibility.md lists %q, which is no longer a difference: remove the row", k)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
