package placementview

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// defaultNamespace is where a namespaced object without metadata.namespace lives, as kubectl.
const defaultNamespace = "default"

// kinds are the kinds a fleet or placement file may hold.
var kinds = []schema.GroupVersionKind{
	clusterv1.GroupVersion.WithKind("ManagedCluster"),
	clusterv1beta2.GroupVersion.WithKind("ManagedClusterSet"),
	clusterv1beta2.GroupVersion.WithKind("ManagedClusterSetBinding"),
	clusterv1alpha1.GroupVersion.WithKind("AddOnPlacementScore"),
	usagev1alpha1.GroupVersion.WithKind("ResourceUsage"),
	clusterv1beta1.GroupVersion.WithKind("Placement"),
	clusterv1beta1.GroupVersion.WithKind("PlacementDecision"),
}

// add adds obj, decoded from a document, to objs; ns is the namespace of namespaced objects that
// name none.
func add(objs *Objects, obj runtime.Object, ns string) error {
	switch v := obj.(type) {
	case *clusterv1.ManagedCluster:
		objs.Clusters = append(objs.Clusters, *v)
	case *clusterv1beta2.ManagedClusterSet:
		objs.Sets = append(objs.Sets, *v)
	case *clusterv1beta2.ManagedClusterSetBinding:
		defaultNS(&v.Namespace, ns)
		objs.Bindings = append(objs.Bindings, *v)
	case *clusterv1alpha1.AddOnPlacementScore:
		if v.Namespace == "" {
			return fmt.Errorf("AddOnPlacementScore %q: metadata.namespace is required: set it to the name of the ManagedCluster the score is for", v.Name)
		}
		objs.Scores = append(objs.Scores, *v)
	case *usagev1alpha1.ResourceUsage:
		if v.Namespace == "" {
			return fmt.Errorf("ResourceUsage %q: metadata.namespace is required: set it to the name of the ManagedCluster the figures are for", v.Name)
		}
		objs.ResourceUsages = append(objs.ResourceUsages, *v)
	case *clusterv1beta1.Placement:
		defaultNS(&v.Namespace, ns)
		objs.Placements = append(objs.Placements, *v)
	case *clusterv1beta1.PlacementDecision:
		defaultNS(&v.Namespace, ns)
		objs.Decisions = append(objs.Decisions, *v)
	default:
		return fmt.Errorf("kind %T is not used to schedule placements; use one of %s", obj, kindNames())
	}
	return nil
}

func defaultNS(ns *string, def string) {
	if *ns == "" {
		*ns = def
	}
}

// kindNames lists the accepted kinds for messages: "apiVersion/kind, ...".
func kindNames() string {
	var names []string
	for _, gvk := range kinds {
		names = append(names, gvk.GroupVersion().String()+" "+gvk.Kind)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// LoadFile reads path and adds its objects to objs.
func LoadFile(path string, objs *Objects) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %w", err)
	}
	return decodeInto(path, data, objs)
}

// Decode decodes data, multi-document YAML (or JSON) named source in messages, into the objects a
// simulation reads, as `flotilla placement simulate` reads its files; namespace is the namespace
// of the namespaced objects that name none ("default" when empty). `flotilla mcp` decodes what an
// assistant sends with it.
func Decode(source string, data []byte, namespace string) (*Objects, error) {
	if namespace == "" {
		namespace = defaultNamespace
	}
	var objs Objects
	if err := decode(source, data, &objs, namespace); err != nil {
		return nil, err
	}
	return &objs, nil
}

// decodeInto decodes every document of data, a multi-document YAML file named source, into objs,
// with namespaced objects that name no namespace in "default".
func decodeInto(source string, data []byte, objs *Objects) error {
	return decode(source, data, objs, defaultNamespace)
}

// decode decodes every document of data into objs, namespaced objects without a namespace in ns.
// An empty document (only blanks and comments) is skipped but still counted, so numbers match
// the separators a reader counts.
func decode(source string, data []byte, objs *Objects, ns string) error {
	for _, doc := range splitDocuments(data) {
		if err := decodeDocument(doc.data, objs, ns); err != nil {
			return fmt.Errorf("%s: document %d (line %d): %w", source, doc.number, doc.line, err)
		}
	}
	return nil
}

func decodeDocument(data []byte, objs *Objects, ns string) error {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("malformed YAML: %w", err)
	}
	if string(js) == "null" {
		return nil
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return fmt.Errorf("not a Kubernetes object: %w", err)
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return fmt.Errorf("apiVersion and kind are required (got apiVersion %q, kind %q); use one of %s", tm.APIVersion, tm.Kind, kindNames())
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return fmt.Errorf("apiVersion %q: %w", tm.APIVersion, err)
	}
	gvk := gv.WithKind(tm.Kind)
	if !slices.Contains(kinds, gvk) {
		what := "unknown kind:"
		if scheme.Scheme.Recognizes(gvk) {
			what = "kind not used to schedule placements:"
		}
		return fmt.Errorf("%s apiVersion %q kind %q: use one of %s", what, tm.APIVersion, tm.Kind, kindNames())
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return fmt.Errorf("kind %s: %w", gvk, err)
	}
	if err := decodeStrict(js, obj); err != nil {
		hint := ""
		if strings.Contains(err.Error(), "unmarshal bool into") {
			hint = ` (YAML reads unquoted yes, no, on, off, y and n as booleans: quote the value, "y")`
		}
		return fmt.Errorf("%s: %w%s", tm.Kind, err, hint)
	}
	return add(objs, obj, ns)
}

// decodeStrict decodes js as the API server does: field names are case-sensitive, and unknown
// and duplicate fields are errors that name the field's path.
func decodeStrict(js []byte, v any) error {
	strictErrs, err := kjson.UnmarshalStrict(js, v, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return errors.Join(strictErrs...)
	}
	return nil
}

// document is one YAML document of a file.
type document struct {
	number int // 1-based
	line   int // 1-based line of its first line
	data   []byte
}

// splitDocuments splits data at lines "---" (optionally followed by a comment). A separator on
// the first line does not start an empty first document.
func splitDocuments(data []byte) []document {
	var docs []document
	cur := document{number: 1, line: 1}
	var buf bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if isSeparator(text) {
			if line > 1 {
				cur.data = bytes.Clone(buf.Bytes())
				docs = append(docs, cur)
				cur = document{number: cur.number + 1}
			}
			cur.line = line + 1
			buf.Reset()
			continue
		}
		buf.WriteString(text)
		buf.WriteByte('\n')
	}
	cur.data = buf.Bytes()
	return append(docs, cur)
}

func isSeparator(line string) bool {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, " \t\r"), "---")
	if !ok {
		return false
	}
	rest = strings.TrimSpace(rest)
	return rest == "" || strings.HasPrefix(rest, "#")
}
