package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/placementview"
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
	e, err := placementview.Compute(ctx, s.Client, s.Clock, ns, in.Name)
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
