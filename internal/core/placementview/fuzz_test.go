package placementview

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecode feeds `placement simulate`'s file decoder arbitrary files, as a user may hand it
// one. It must never panic; documents are numbered from 1 with line numbers that match the
// separators a reader counts; an error names the file, document and line; and every namespaced
// object it accepts has a namespace (defaulted or required).
func FuzzDecode(f *testing.F) {
	// Seeds: the example fleets, and the good and bad files of `placement simulate`'s tests.
	var files []string
	for _, pattern := range []string{"../../../examples/placement/*.yaml", "../../cli/placement/testdata/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			f.Fatalf("no seed files %s: %v", pattern, err)
		}
		files = append(files, m...)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, seed := range []string{
		"",
		"---",
		"---\n---\n",
		"--- # c\r\n---\t\r\n",
		"a: |\n  ---x\nb: ---\n",
		"apiVersion: cluster.open-cluster-management.io/v1alpha1\nkind: AddOnPlacementScore\nmetadata: {name: s}\n",
		"apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p}\nspec: {numberOfClusters: y}\n",
		"apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p, name: q}\n",
		"apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata: {name: a}\nspec: {managedClusterClientConfigs: [{url: u, caBundle: '!!'}]}\n",
		"apiVersion: /\nkind: x\n",
		"a: &a [*a, *a]\n",
		"- 1\n- 2\n",
		"\t- :",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs := splitDocuments(data)
		lines := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		for i, d := range docs {
			if d.number != i+1 {
				t.Fatalf("document %d is numbered %d", i+1, d.number)
			}
			if i > 0 && d.line != docs[i-1].line+bytes.Count(docs[i-1].data, []byte("\n"))+1 {
				t.Fatalf("document %d starts on line %d, after document %d of %d lines from line %d and one separator",
					d.number, d.line, i, bytes.Count(docs[i-1].data, []byte("\n")), docs[i-1].line)
			}
		}
		if last := docs[len(docs)-1]; last.line+bytes.Count(last.data, []byte("\n"))-1 != lines && len(data) > 0 {
			t.Fatalf("the last document ends on line %d, the file has %d lines", last.line+bytes.Count(last.data, []byte("\n"))-1, lines)
		}

		var objs Objects
		if err := decodeInto("f.yaml", data, &objs); err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml: document ") {
				t.Fatalf("the error does not name the file and document: %v", err)
			}
			return
		}
		var missing []string
		for _, o := range objs.Bindings {
			missing = appendIfEmpty(missing, "ManagedClusterSetBinding", o.Name, o.Namespace)
		}
		for _, o := range objs.Scores {
			missing = appendIfEmpty(missing, "AddOnPlacementScore", o.Name, o.Namespace)
		}
		for _, o := range objs.ResourceUsages {
			missing = appendIfEmpty(missing, "ResourceUsage", o.Name, o.Namespace)
		}
		for _, o := range objs.Placements {
			missing = appendIfEmpty(missing, "Placement", o.Name, o.Namespace)
		}
		for _, o := range objs.Decisions {
			missing = appendIfEmpty(missing, "PlacementDecision", o.Name, o.Namespace)
		}
		if len(missing) > 0 {
			t.Fatalf("decodeInto accepted namespaced objects without a namespace: %v", missing)
		}
	})
}

func appendIfEmpty(missing []string, kind, name, ns string) []string {
	if ns == "" {
		return append(missing, fmt.Sprintf("%s %q", kind, name))
	}
	return missing
}
