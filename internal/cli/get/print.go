package get

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
)

// printClusters writes NAME ACCEPTED JOINED AVAILABLE GPUS AGE.
func printClusters(w io.Writer, list *clusterv1.ManagedClusterList, clk clock.PassiveClock) error {
	t := newTable(w, "NAME", "ACCEPTED", "JOINED", "AVAILABLE", "GPUS", "AGE")
	for i := range list.Items {
		c := &list.Items[i]
		t.row(c.Name,
			strconv.FormatBool(c.Spec.HubAcceptsClient),
			conditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
			conditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
			gpus(c),
			age(c.CreationTimestamp, clk))
	}
	return t.flush()
}

// printClusterSets writes NAME SELECTOR EMPTY AGE.
func printClusterSets(w io.Writer, list *clusterv1beta2.ManagedClusterSetList, clk clock.PassiveClock) error {
	t := newTable(w, "NAME", "SELECTOR", "EMPTY", "AGE")
	for i := range list.Items {
		s := &list.Items[i]
		t.row(s.Name,
			selector(s.Spec.ClusterSelector),
			conditionStatus(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty),
			age(s.CreationTimestamp, clk))
	}
	return t.flush()
}

// printBindings writes [NAMESPACE] NAME CLUSTERSET BOUND AGE.
func printBindings(w io.Writer, list *clusterv1beta2.ManagedClusterSetBindingList, clk clock.PassiveClock, allNamespaces bool) error {
	header := []string{"NAME", "CLUSTERSET", "BOUND", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	t := newTable(w, header...)
	for i := range list.Items {
		b := &list.Items[i]
		cells := []string{b.Name,
			b.Spec.ClusterSet,
			conditionStatus(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType),
			age(b.CreationTimestamp, clk)}
		if allNamespaces {
			cells = append([]string{b.Namespace}, cells...)
		}
		t.row(cells...)
	}
	return t.flush()
}

// conditionStatus is the status of the condition of type typ, "Unknown" when there is none: a
// condition nobody has set yet says as little as one set to Unknown.
func conditionStatus(conditions []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conditions, typ); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}

// selector says how a set picks its members: its selector type for ExclusiveClusterSetLabel,
// else the label selector. An empty selector selects every cluster (the "global" set), so it
// prints as <all>, never as the <none> kubectl prints for an empty selector string.
func selector(s clusterv1beta2.ManagedClusterSelector) string {
	switch s.SelectorType {
	case "", clusterv1beta2.ExclusiveClusterSetLabel:
		// The API server defaults an empty type to ExclusiveClusterSetLabel.
		return string(clusterv1beta2.ExclusiveClusterSetLabel)
	case clusterv1beta2.LabelSelector:
		if s.LabelSelector == nil {
			return "<none>"
		}
		sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
		if err != nil {
			return "<invalid>"
		}
		if sel.Empty() {
			return "<all>"
		}
		return sel.String()
	default:
		return string(s.SelectorType)
	}
}

// age is how long ago t was, as kubectl's AGE column prints it (5s, 3m, 2d4h).
func age(t metav1.Time, clk clock.PassiveClock) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(clk.Since(t.Time))
}

// table writes aligned columns as kubectl does.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	// tabwriter keeps the first write error and flush returns it.
	_, _ = fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// printObjects writes list's items as a kubectl List in format ("yaml" or "json"), each item
// with its apiVersion and kind (clients drop them from typed lists) and without managedFields,
// which kubectl also hides.
func printObjects(w io.Writer, list runtime.Object, format string) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	out := metav1.List{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"},
		Items:    make([]runtime.RawExtension, 0, len(items)),
	}
	for _, item := range items {
		obj := item.DeepCopyObject()
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		m.SetManagedFields(nil)
		out.Items = append(out.Items, runtime.RawExtension{Object: obj})
	}
	b, err := json.MarshalIndent(out, "", "    ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}
