// Package clusterset finds a placement's candidate clusters: the members of the cluster sets that
// are bound to the placement's namespace and, when spec.clusterSets is given, requested by it.
// Members of an ExclusiveClusterSetLabel set carry the label
// cluster.open-cluster-management.io/clusterset=<set>; members of a LabelSelector set match its
// selector. Clusters being deleted are never candidates.
package clusterset

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// Name names this stage in explanations.
const Name = "ClusterSet"

// Result is the candidate stage's outcome.
type Result struct {
	// Candidates are the clusters the filters see, sorted by name.
	Candidates []*clusterv1.ManagedCluster
	// Excluded are members of the eligible sets that are not candidates, with why.
	Excluded []Exclusion
	// Reason and Message are set when there is no candidate at all: one of OCM's
	// PlacementSatisfied reasons NoManagedClusterSetBindings, NoIntersection or
	// AllManagedClusterSetsEmpty.
	Reason, Message string
}

// Exclusion is a member cluster that is not a candidate.
type Exclusion struct {
	Cluster *clusterv1.ManagedCluster
	Message string
}

// Eligible returns the names of the sets placement may use (bound into its namespace, and named
// in spec.clusterSets if it names any), sorted; or, when there is none, a Result with OCM's
// reason and message.
func Eligible(placement *clusterv1beta1.Placement, clusterSets []clusterv1beta2.ManagedClusterSet,
	bindings []clusterv1beta2.ManagedClusterSetBinding) ([]string, Result) {
	setsByName := liveSets(clusterSets)
	bound := sets.New[string]()
	for _, b := range bindings {
		if b.Namespace != placement.Namespace || b.DeletionTimestamp != nil {
			continue
		}
		// A binding counts when the set it is named after exists: OCM reads the binding's name
		// (its webhook keeps spec.clusterSet equal to it).
		if _, ok := setsByName[b.Name]; ok {
			bound.Insert(b.Name)
		}
	}
	if bound.Len() == 0 {
		return nil, Result{Reason: clusterv1beta1.PlacementReasonNoManagedClusterSetBindings,
			Message: fmt.Sprintf("No valid ManagedClusterSetBindings found in placement namespace %q: bind a ManagedClusterSet with a ManagedClusterSetBinding", placement.Namespace)}
	}
	eligible := bound
	if len(placement.Spec.ClusterSets) > 0 {
		eligible = bound.Intersection(sets.New(placement.Spec.ClusterSets...))
		if eligible.Len() == 0 {
			return nil, Result{Reason: clusterv1beta1.PlacementReasonNoIntersection,
				Message: fmt.Sprintf("None of ManagedClusterSets %v in spec.clusterSets are bound to placement namespace %q (bound: %v)",
					placement.Spec.ClusterSets, placement.Namespace, sets.List(bound))}
		}
	}
	return sets.List(eligible), Result{}
}

// Members returns the clusters of the eligible sets (names from Eligible), sorted by name: the
// candidates, and those excluded with why. It depends on the fleet only, so a caller may keep
// its result for every placement with the same eligible sets.
func Members(eligible []string, clusterSets []clusterv1beta2.ManagedClusterSet, clusters []clusterv1.ManagedCluster) Result {
	setsByName := liveSets(clusterSets)
	selectors := make([]labels.Selector, 0, len(eligible))
	for _, name := range eligible {
		if sel := setSelector(setsByName[name]); sel != nil {
			selectors = append(selectors, sel)
		}
	}
	res := Result{Candidates: make([]*clusterv1.ManagedCluster, 0, len(clusters))}
	for i := range clusters {
		c := &clusters[i]
		member := false
		for _, sel := range selectors {
			if sel.Matches(labels.Set(c.Labels)) {
				member = true
				break
			}
		}
		switch {
		case !member:
		case c.DeletionTimestamp != nil:
			res.Excluded = append(res.Excluded, Exclusion{Cluster: c, Message: "the cluster is being deleted"})
		default:
			res.Candidates = append(res.Candidates, c)
		}
	}
	byName := func(a, b *clusterv1.ManagedCluster) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(res.Candidates, byName) { // a lister's order often is
		slices.SortFunc(res.Candidates, byName)
	}
	sort.Slice(res.Excluded, func(i, j int) bool { return res.Excluded[i].Cluster.Name < res.Excluded[j].Cluster.Name })
	if len(res.Candidates) == 0 {
		res.Reason = clusterv1beta1.PlacementReasonAllManagedClusterSetsEmpty
		res.Message = fmt.Sprintf("All ManagedClusterSets %v have no member ManagedCluster", eligible)
	}
	return res
}

// liveSets maps the name of each set not being deleted to it.
func liveSets(clusterSets []clusterv1beta2.ManagedClusterSet) map[string]*clusterv1beta2.ManagedClusterSet {
	out := make(map[string]*clusterv1beta2.ManagedClusterSet, len(clusterSets))
	for i := range clusterSets {
		if clusterSets[i].DeletionTimestamp == nil {
			out[clusterSets[i].Name] = &clusterSets[i]
		}
	}
	return out
}

// setSelector returns the selector of the set's members, or nil when it selects nothing.
func setSelector(set *clusterv1beta2.ManagedClusterSet) labels.Selector {
	switch set.Spec.ClusterSelector.SelectorType {
	case clusterv1beta2.LabelSelector:
		if set.Spec.ClusterSelector.LabelSelector == nil {
			return nil // as OCM: a nil selector selects nothing; {} selects every cluster
		}
		sel, err := v1.LabelSelectorAsSelector(set.Spec.ClusterSelector.LabelSelector)
		if err != nil {
			return nil
		}
		return sel
	default: // "" and ExclusiveClusterSetLabel
		return labels.SelectorFromSet(labels.Set{clusterv1beta2.ClusterSetLabel: set.Name})
	}
}
