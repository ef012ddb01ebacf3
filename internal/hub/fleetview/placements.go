package fleetview

import (
	"sort"
	"strconv"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// Placement is one placement, its state and its decisions.
type Placement struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// NumberOfClusters is the spec's; absent means every cluster that passes the filters.
	NumberOfClusters *int32   `json:"numberOfClusters,omitempty" jsonschema:"how many clusters the placement asks for; absent means every cluster that passes its filters"`
	ClusterSets      []string `json:"clusterSets" jsonschema:"the cluster sets it selects from; empty means every set bound to its namespace"`
	// Selected is status.numberOfSelectedClusters.
	Selected           int32           `json:"selected"`
	Conditions         []Condition     `json:"conditions"`
	DecisionGroups     []DecisionGroup `json:"decisionGroups"`
	Decisions          []Decision      `json:"decisions" jsonschema:"the clusters of the placement's PlacementDecisions, with the hub's reason for each"`
	SchedulingDisabled bool            `json:"schedulingDisabled,omitempty" jsonschema:"scheduling is disabled by an annotation: the hub keeps the decisions it has"`
}

// Condition is a condition without its times.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// DecisionGroup is one of a placement's decision groups.
type DecisionGroup struct {
	Index        int32  `json:"index"`
	Name         string `json:"name,omitempty"`
	ClusterCount int32  `json:"clusterCount"`
}

// Decision is one selected cluster, as the hub's PlacementDecisions hold it.
type Decision struct {
	Cluster            string `json:"cluster"`
	Reason             string `json:"reason"`
	DecisionGroupIndex *int32 `json:"decisionGroupIndex,omitempty"`
}

// PlacementReports describes placements with their decisions, ordered by namespace and name.
func PlacementReports(placements []clusterv1beta1.Placement, decisions []clusterv1beta1.PlacementDecision) []Placement {
	type key struct{ ns, name string }
	byPlacement := map[key][]clusterv1beta1.PlacementDecision{}
	for _, d := range decisions {
		k := key{d.Namespace, d.Labels[clusterv1beta1.PlacementLabel]}
		byPlacement[k] = append(byPlacement[k], d)
	}
	out := make([]Placement, 0, len(placements))
	for i := range placements {
		p := &placements[i]
		r := Placement{Namespace: p.Namespace, Name: p.Name, NumberOfClusters: p.Spec.NumberOfClusters,
			ClusterSets: append([]string{}, p.Spec.ClusterSets...), Selected: p.Status.NumberOfSelectedClusters,
			Conditions: conditions(p.Status), DecisionGroups: []DecisionGroup{}, Decisions: []Decision{},
			SchedulingDisabled: p.Annotations[clusterv1beta1.PlacementDisableAnnotation] == "true"}
		for _, g := range p.Status.DecisionGroups {
			r.DecisionGroups = append(r.DecisionGroups, DecisionGroup{Index: g.DecisionGroupIndex, Name: g.DecisionGroupName, ClusterCount: g.ClusterCount})
		}
		slices := byPlacement[key{p.Namespace, p.Name}]
		sort.Slice(slices, func(i, j int) bool { return slices[i].Name < slices[j].Name })
		for _, d := range slices {
			var group *int32
			if v, err := strconv.ParseInt(d.Labels[clusterv1beta1.DecisionGroupIndexLabel], 10, 32); err == nil {
				g := int32(v)
				group = &g
			}
			for _, cd := range d.Status.Decisions {
				r.Decisions = append(r.Decisions, Decision{Cluster: cd.ClusterName, Reason: cd.Reason, DecisionGroupIndex: group})
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}
func conditions(st clusterv1beta1.PlacementStatus) []Condition {
	out := make([]Condition, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		out = append(out, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}
