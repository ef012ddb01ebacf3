package clusterset

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// Selector returns the label selector that picks the members of set among ManagedClusters. It
// can be handed to a List call (client.MatchingLabelsSelector) or matched in memory.
//
// An empty selector type counts as ExclusiveClusterSetLabel, the API's default, so that objects
// built in code behave like objects read from the API server. A LabelSelector set without a
// selector (the API refuses it) selects nothing; an empty selector selects every cluster.
func Selector(set *clusterv1beta2.ManagedClusterSet) (labels.Selector, error) {
	cs := set.Spec.ClusterSelector
	switch cs.SelectorType {
	case clusterv1beta2.ExclusiveClusterSetLabel, "":
		// Validated: a set name longer than a label value allows simply matches no cluster.
		return labels.SelectorFromValidatedSet(labels.Set{clusterv1beta2.ClusterSetLabel: set.Name}), nil
	case clusterv1beta2.LabelSelector:
		if cs.LabelSelector == nil {
			return labels.Nothing(), nil
		}
		s, err := metav1.LabelSelectorAsSelector(cs.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("ManagedClusterSet %s: spec.clusterSelector.labelSelector is invalid: %w", set.Name, err)
		}
		return s, nil
	default:
		return nil, fmt.Errorf("ManagedClusterSet %s: spec.clusterSelector.selectorType %q is unknown; use %s or %s",
			set.Name, cs.SelectorType, clusterv1beta2.ExclusiveClusterSetLabel, clusterv1beta2.LabelSelector)
	}
}

// IsMember reports whether cluster belongs to set.
func IsMember(set *clusterv1beta2.ManagedClusterSet, cluster *clusterv1.ManagedCluster) (bool, error) {
	s, err := Selector(set)
	if err != nil {
		return false, err
	}
	return s.Matches(labels.Set(cluster.Labels)), nil
}

// Members returns the names of the clusters in clusters that belong to set, sorted. Clusters being
// deleted are members until they are gone; callers that must not choose them (the scheduler)
// filter them out themselves.
func Members(set *clusterv1beta2.ManagedClusterSet, clusters []clusterv1.ManagedCluster) ([]string, error) {
	s, err := Selector(set)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range clusters {
		if s.Matches(labels.Set(clusters[i].Labels)) {
			names = append(names, clusters[i].Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// SetsOf returns the names of the sets in sets that cluster belongs to, sorted. Sets whose
// selector is invalid hold no cluster and are left out.
func SetsOf(cluster *clusterv1.ManagedCluster, sets []clusterv1beta2.ManagedClusterSet) []string {
	var names []string
	for i := range sets {
		if ok, err := IsMember(&sets[i], cluster); err == nil && ok {
			names = append(names, sets[i].Name)
		}
	}
	sort.Strings(names)
	return names
}
