package placement

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/core/placementview"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// NewCommand returns `flotilla placement`.
func NewCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "placement",
		Short: "Work with Placements without a hub",
	}
	cmd.AddCommand(newSimulateCommand(io, clk))
	return cmd
}

type simulateOptions struct {
	fleet      string
	placements string
	output     string
}

func newSimulateCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	var o simulateOptions
	cmd := &cobra.Command{
		Use:   "simulate --fleet FLEET.yaml -f PLACEMENT.yaml [-o json|table]",
		Short: "Schedule Placements against a fleet described in a file, with no hub",
		Long: "Runs the hub's scheduler on the Placements of -f against the objects of --fleet and prints, for\n" +
			"each placement, its decisions, its conditions and why every cluster of its eligible sets was\n" +
			"selected, filtered or not chosen.\n\n" +
			"--fleet is multi-document YAML of ManagedClusters, ManagedClusterSets, ManagedClusterSetBindings,\n" +
			"AddOnPlacementScores, Placements and PlacementDecisions; existing PlacementDecisions give the\n" +
			"Steady and Balance prioritizers their inputs. -f holds one or more Placements, each simulated\n" +
			"on its own against the fleet, in order. A namespaced object without a namespace is in \"default\".",
		Example: `  flotilla placement simulate --fleet examples/placement/fleet.yaml -f examples/placement/gpu.yaml
  flotilla placement simulate --fleet fleet.yaml -f placements.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return simulate(io, clk, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.fleet, "fleet", "", "multi-document YAML file of the fleet's objects (required)")
	f.StringVarP(&o.placements, "filename", "f", "", "YAML file of the Placements to simulate (required)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	_ = cmd.MarkFlagRequired("fleet")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func simulate(io streams.IO, clk clock.PassiveClock, o simulateOptions) error {
	switch o.output {
	case "table", "json":
	default:
		return fmt.Errorf("--output (-o) %q is not supported: use -o table or -o json", o.output)
	}
	var fleet placementview.Objects
	if err := placementview.LoadFile(o.fleet, &fleet); err != nil {
		return fmt.Errorf("--fleet: %w", err)
	}
	var in placementview.Objects
	if err := placementview.LoadFile(o.placements, &in); err != nil {
		return fmt.Errorf("-f: %w", err)
	}
	if err := placementview.PlacementsOnly("-f "+o.placements, "the --fleet file", &in); err != nil {
		return err
	}
	for i, sim := range placementview.Simulate(clk, &fleet, in.Placements) {
		if err := write(io, o.output, i, sim.Namespace, sim.Name, &sim.Result); err != nil {
			return err
		}
	}
	return nil
}

func write(io streams.IO, format string, i int, ns, name string, res *scheduler.Result) error {
	if format == "json" {
		b, err := json.MarshalIndent(placementview.NewOutput(ns, name, res), "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(io.Out, "%s\n", b)
		return err
	}
	if i > 0 {
		if _, err := fmt.Fprintln(io.Out); err != nil {
			return err
		}
	}
	return placementview.WriteTable(io.Out, ns, name, res)
}
