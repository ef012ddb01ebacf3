package scheduler

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/predicate"
)

const groupField = "spec.decisionStrategy.groupStrategy"

// grouper splits the selected clusters into decision groups as OCM does.
type grouper struct {
	names     []string
	selectors []predicate.Selector
	perGroup  intstr.IntOrString
}

func newGrouper(gs clusterv1beta1.GroupStrategy) (*grouper, error) {
	g := &grouper{perGroup: gs.ClustersPerDecisionGroup}
	for i, d := range gs.DecisionGroups {
		sel, err := predicate.CompileSelector(fmt.Sprintf("%s.decisionGroups[%d].groupClusterSelector", groupField, i),
			d.GroupClusterSelector.LabelSelector, d.GroupClusterSelector.ClaimSelector)
		if err != nil {
			return nil, err
		}
		g.names = append(g.names, d.GroupName)
		g.selectors = append(g.selectors, sel)
	}
	if _, err := GroupSize(g.perGroup, 1); err != nil {
		return nil, err
	}
	return g, nil
}

// GroupSize is the number of clusters per decision group for total selected clusters, as OCM
// computes it: clustersPerDecisionGroup as a number, or "N%" of total rounded up; 0, unset, or at
// least total means one group of all. A string that is not a percent is a misconfiguration, as in
// OCM.
func GroupSize(v intstr.IntOrString, total int) (int, error) {
	n := total
	switch v.Type {
	case intstr.Int:
		n = int(v.IntVal)
	case intstr.String:
		pct, ok := strings.CutSuffix(v.StrVal, "%")
		f, err := strconv.ParseFloat(pct, 64)
		if !ok || err != nil {
			return 0, &framework.ConfigError{Field: groupField + ".clustersPerDecisionGroup",
				Message: fmt.Sprintf("%q is not a percent; write a number such as 5 (not a string) or a percent such as \"25%%\"", v.StrVal)}
		}
		n = int(math.Ceil(f / 100 * float64(total)))
	}
	if n <= 0 || n > total {
		n = total
	}
	return n, nil
}

// split returns the groups: named groups first (first match wins), then the rest; each sorted by
// name and cut into pieces of GroupSize. No cluster gives one empty group.
func (g *grouper) split(selected []*clusterv1.ManagedCluster) []DecisionGroup {
	buckets := make([][]string, len(g.names)+1)
	for _, c := range selected {
		i := 0
		for ; i < len(g.selectors); i++ {
			if g.selectors[i].Mismatch(c) == "" {
				break
			}
		}
		buckets[i] = append(buckets[i], c.Name)
	}
	size, _ := GroupSize(g.perGroup, len(selected))
	var groups []DecisionGroup
	for b, names := range buckets {
		sort.Strings(names)
		name := ""
		if b < len(g.names) {
			name = g.names[b]
		}
		for start := 0; start < len(names); start += size {
			end := min(start+size, len(names))
			groups = append(groups, DecisionGroup{Index: int32(len(groups)), Name: name, Clusters: names[start:end]})
		}
	}
	if len(groups) == 0 {
		groups = []DecisionGroup{{Index: 0, Clusters: []string{}}}
	}
	return groups
}

// SlicePlacementDecisions cuts each group into PlacementDecisions of at most
// clusterv1beta1.MaxDecisionsPerPlacementDecision, named <placement>-decision-<N> from N=1.
func SlicePlacementDecisions(placement string, groups []DecisionGroup, byName map[string]Decision) []PlacementDecisionSlice {
	var out []PlacementDecisionSlice
	for _, g := range groups {
		for start := 0; start == 0 || start < len(g.Clusters); start += clusterv1beta1.MaxDecisionsPerPlacementDecision {
			end := min(start+clusterv1beta1.MaxDecisionsPerPlacementDecision, len(g.Clusters))
			ds := make([]clusterv1beta1.ClusterDecision, 0, end-start)
			for _, c := range g.Clusters[start:end] {
				d := byName[c]
				ds = append(ds, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: d.Reason, Score: d.Score})
			}
			out = append(out, PlacementDecisionSlice{
				Name: clusterv1beta1.PlacementDecisionName(placement, len(out)+1),
				Labels: map[string]string{
					clusterv1beta1.PlacementLabel:          placement,
					clusterv1beta1.DecisionGroupNameLabel:  g.Name,
					clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(int(g.Index)),
				},
				Decisions: ds,
			})
		}
	}
	return out
}
