package mcpserver

import (
	"context"
	"sort"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/cli/explain"
	"github.com/flotilla/flotilla/internal/placementview"
)

// PlacementsInput are list_placements' arguments.
type PlacementsInput struct {
	Namespace     string `json:"namespace,omitempty" jsonschema:"namespace of the placements (default: the kubeconfig context's namespace)"`
	AllNamespaces bool   `json:"allNamespaces,omitempty" jsonschema:"list the placements of every namespace; namespace must then be left out"`
	Name          string `json:"name,omitempty" jsonschema:"only this placement"`
}

// PlacementsOutput is list_placements' answer.
type PlacementsOutput struct {
	Placements []Placement `json:"placements"`
}

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

func (s *server) addPlacementTools(m *mcp.Server) {
	addTool(m, &mcp.Tool{Name: "list_placements", Annotations: readOnly,
		Description: "List placements with their conditions, decision groups and decisions: each selected cluster and the hub's reason " +
			"(score and prioritizers). explain_placement says why every other cluster was filtered or not chosen."}, s.listPlacements)
	addTool(m, &mcp.Tool{Name: "explain_placement", Annotations: readOnly,
		Description: "Explain a placement as `flotilla explain placement -o json` does: schedule it now with the hub's scheduling core " +
			"against the hub's objects and say, for every cluster of its eligible sets, whether it was selected, filtered " +
			"(by which plugin and why) or not chosen, with each prioritizer's weight and score. Notes say when the hub's " +
			"decisions differ from scheduling now."}, s.explainPlacement)
	addTool(m, &mcp.Tool{Name: "placement_simulate", Annotations: readOnly,
		Description: "What-if: schedule Placements that need not exist, as `flotilla placement simulate -o json` does, against the hub's " +
			"live fleet read now (or against the fleet given in the fleet argument), without creating anything."}, s.simulate)
}

func (s *server) listPlacements(ctx context.Context, _ *mcp.CallToolRequest, in PlacementsInput) (*mcp.CallToolResult, PlacementsOutput, error) {
	opts, where, err := s.scope(in.Namespace, in.AllNamespaces, "placements")
	if err != nil {
		return nil, PlacementsOutput{}, err
	}
	if err := checkName("name", in.Name, false); err != nil {
		return nil, PlacementsOutput{}, err
	}
	var placements clusterv1beta1.PlacementList
	if err := s.Client.List(ctx, &placements, opts...); err != nil {
		return nil, PlacementsOutput{}, hubError(err, "listing placements "+where, "")
	}
	var decisions clusterv1beta1.PlacementDecisionList
	if err := s.Client.List(ctx, &decisions, opts...); err != nil {
		return nil, PlacementsOutput{}, hubError(err, "listing placementdecisions "+where, "")
	}
	out := placementReports(placements.Items, decisions.Items)
	if in.Name != "" {
		var one []Placement
		for _, p := range out {
			if p.Name == in.Name {
				one = append(one, p)
			}
		}
		if len(one) == 0 {
			return nil, PlacementsOutput{}, argError("name", "no placement %q %s: list them with list_placements without name", in.Name, where)
		}
		out = one
	}
	return nil, PlacementsOutput{Placements: out}, nil
}

// placementReports describes placements with their decisions, ordered by namespace and name.
func placementReports(placements []clusterv1beta1.Placement, decisions []clusterv1beta1.PlacementDecision) []Placement {
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

// ExplainInput are explain_placement's arguments.
type ExplainInput struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"namespace of the placement (default: the kubeconfig context's namespace)"`
	Name      string `json:"name" jsonschema:"name of the placement"`
}

// ExplainOutput is explain_placement's answer.
type ExplainOutput struct {
	Explanation placementview.Output `json:"explanation"`
	Notes       []string             `json:"notes"`
}

func (s *server) explainPlacement(ctx context.Context, _ *mcp.CallToolRequest, in ExplainInput) (*mcp.CallToolResult, ExplainOutput, error) {
	if err := checkNamespace("namespace", in.Namespace); err != nil {
		return nil, ExplainOutput{}, err
	}
	if err := checkName("name", in.Name, true); err != nil {
		return nil, ExplainOutput{}, err
	}
	ns := s.namespaceOf(in.Namespace)
	e, err := explain.Compute(ctx, s.Client, s.Clock, ns, in.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, ExplainOutput{}, argError("name", "no placement %q in namespace %s: list them with list_placements (namespace %q)", in.Name, ns, ns)
		}
		return nil, ExplainOutput{}, hubError(err, "explaining placement "+ns+"/"+in.Name, "")
	}
	notes := e.Notes()
	if notes == nil {
		notes = []string{}
	}
	return nil, ExplainOutput{Explanation: placementview.NewOutput(ns, in.Name, &e.Result), Notes: notes}, nil
}
