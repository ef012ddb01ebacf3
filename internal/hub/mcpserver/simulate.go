package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flotilla/flotilla/internal/core/placementview"
)

// maxDocument bounds the YAML an assistant may send, as the hub's explanation server bounds a
// what-if: a fleet of 10,000 clusters is a few MiB.
const maxDocument = 16 << 20

// SimulateInput are placement_simulate's arguments.
type SimulateInput struct {
	Placements string `json:"placements" jsonschema:"YAML (or JSON) of one or more cluster.open-cluster-management.io/v1beta1 Placements, as documents separated by ---; each is simulated on its own"`
	Fleet      string `json:"fleet,omitempty" jsonschema:"YAML of the fleet to simulate against: ManagedClusters, ManagedClusterSets, ManagedClusterSetBindings, AddOnPlacementScores, ResourceUsages and PlacementDecisions, as flotilla placement simulate --fleet takes (default: the hub's objects, read now)"`
	Namespace  string `json:"namespace,omitempty" jsonschema:"namespace of the Placements and namespaced fleet objects that name none (default: the kubeconfig context's namespace)"`
}

// SimulateOutput is placement_simulate's answer.
type SimulateOutput struct {
	// Fleet says what was simulated against.
	Fleet   string                 `json:"fleet"`
	Results []placementview.Output `json:"results" jsonschema:"one result per placement, in order: the decisions, the conditions and why every cluster of the eligible sets was selected, filtered or not chosen"`
}

func (s *server) simulate(ctx context.Context, _ *mcp.CallToolRequest, in SimulateInput) (*mcp.CallToolResult, SimulateOutput, error) {
	if err := checkNamespace("namespace", in.Namespace); err != nil {
		return nil, SimulateOutput{}, err
	}
	for arg, v := range map[string]string{"placements": in.Placements, "fleet": in.Fleet} {
		if len(v) > maxDocument {
			return nil, SimulateOutput{}, argError(arg, "is %d bytes, more than the %d allowed: send fewer objects", len(v), maxDocument)
		}
	}
	ns := s.namespaceOf(in.Namespace)
	ps, err := placementview.Decode("placements", []byte(in.Placements), ns)
	if err != nil {
		return nil, SimulateOutput{}, argError("placements", "%v", err)
	}
	if err := placementview.PlacementsOnly("placements", "the fleet argument", ps); err != nil {
		return nil, SimulateOutput{}, argError("placements", "%v", err)
	}
	fleets := map[string]*placementview.Objects{}
	what := "the fleet argument"
	if in.Fleet != "" {
		f, err := placementview.Decode("fleet", []byte(in.Fleet), ns)
		if err != nil {
			return nil, SimulateOutput{}, argError("fleet", "%v", err)
		}
		if len(f.Placements) > 0 {
			return nil, SimulateOutput{}, argError("fleet", "holds %d Placements: move the placements to simulate to the placements argument (other placements give the scheduler nothing; their PlacementDecisions do)", len(f.Placements))
		}
		for _, p := range ps.Placements {
			fleets[p.Namespace] = f
		}
	} else {
		// The hub's objects: the bindings the scheduler reads are the placement's namespace's.
		what = "the hub's objects, read now with your identity"
		for _, p := range ps.Placements {
			if fleets[p.Namespace] != nil {
				continue
			}
			f, err := placementview.ListFleet(ctx, s.Client, p.Namespace)
			if err != nil {
				return nil, SimulateOutput{}, hubError(err, "reading the fleet for placements in namespace "+p.Namespace, "")
			}
			fleets[p.Namespace] = f
		}
	}
	out := SimulateOutput{Fleet: what, Results: make([]placementview.Output, 0, len(ps.Placements))}
	for i := range ps.Placements {
		p := ps.Placements[i : i+1]
		for _, sim := range placementview.Simulate(s.Clock, fleets[p[0].Namespace], p) {
			out.Results = append(out.Results, placementview.NewOutput(sim.Namespace, sim.Name, &sim.Result))
		}
	}
	return nil, out, nil
}
