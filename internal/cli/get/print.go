package get

import (
	"encoding/json"
	"io"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/cli/printing"
	"github.com/flotilla/flotilla/internal/core/gpuview"
)

// printClusters writes NAME ACCEPTED JOINED AVAILABLE GPUS FREE-GPUS AGE; usages (nil when
// unknown) are the clusters' ResourceUsages.
func printClusters(w io.Writer, list *clusterv1.ManagedClusterList, usages *usagev1alpha1.ResourceUsageList, clk clock.PassiveClock) error {
	var byCluster map[string]*usagev1alpha1.ResourceUsage
	if usages != nil {
		byCluster = gpuview.ByCluster(usages.Items)
	}
	t := printing.NewTable(w, "NAME", "ACCEPTED", "JOINED", "AVAILABLE", "GPUS", "FREE-GPUS", "AGE")
	for i := range list.Items {
		c := &list.Items[i]
		t.Row(c.Name,
			strconv.FormatBool(c.Spec.HubAcceptsClient),
			printing.ConditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
			printing.ConditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
			gpus(c),
			freeGPUs(byCluster[c.Name], clk.Now()),
			printing.Age(c.CreationTimestamp, clk))
	}
	return t.Flush()
}

// printClusterSets writes NAME SELECTOR EMPTY AGE.
func printClusterSets(w io.Writer, list *clusterv1beta2.ManagedClusterSetList, clk clock.PassiveClock) error {
	t := printing.NewTable(w, "NAME", "SELECTOR", "EMPTY", "AGE")
	for i := range list.Items {
		s := &list.Items[i]
		t.Row(s.Name,
			selector(s.Spec.ClusterSelector),
			printing.ConditionStatus(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty),
			printing.Age(s.CreationTimestamp, clk))
	}
	return t.Flush()
}

// printBindings writes [NAMESPACE] NAME CLUSTERSET BOUND AGE.
func printBindings(w io.Writer, list *clusterv1beta2.ManagedClusterSetBindingList, clk clock.PassiveClock, allNamespaces bool) error {
	header := []string{"NAME", "CLUSTERSET", "BOUND", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	t := printing.NewTable(w, header...)
	for i := range list.Items {
		b := &list.Items[i]
		cells := []string{b.Name,
			b.Spec.ClusterSet,
			printing.ConditionStatus(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType),
			printing.Age(b.CreationTimestamp, clk)}
		if allNamespaces {
			cells = append([]string{b.Namespace}, cells...)
		}
		t.Row(cells...)
	}
	return t.Flush()
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
