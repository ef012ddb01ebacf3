package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/core/placementview"
)

// NewCommand returns `flotilla explain`.
func NewCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	return newCommand(io, clk, kubeflags.NewHubReader)
}

func newCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Explain the hub's decisions: why a placement chose its clusters, why a workload waits, how a cluster differs from a policy",
	}
	cmd.AddCommand(newPlacementCommand(io, clk, newClient))
	cmd.AddCommand(newWorkloadCommand(io, clk, newClient))
	cmd.AddCommand(newPolicyCommand(io, clk, newClient))
	return cmd
}

type options struct {
	kube   kubeflags.Flags
	output string
	// viaHub is the hub's explanation server (https://HOST:PORT); viaHubCA the file of the
	// authority that signed its certificate.
	viaHub, viaHubCA string
}

func newPlacementCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "placement NAMESPACE/NAME",
		Short: "Say why each cluster was selected, filtered or not chosen by a Placement",
		Long: "Reads a Placement and the fleet from the hub, schedules the placement with the hub's scheduling core,\n" +
			"and prints every cluster of its eligible cluster sets: selected, filtered or not chosen; the plugin\n" +
			"that filtered it and why; each prioritizer's weight and score; the total and the rank.\n\n" +
			"NAME alone is in the namespace of the kubeconfig's context. -o json prints what\n" +
			"`flotilla placement simulate -o json` prints.",
		Example: `  flotilla explain placement ml/training
  flotilla explain placement ml/training -o json --kubeconfig "$(flotilla dev kubeconfig hub)"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.output {
			case "table", "json":
			default:
				return fmt.Errorf("--output (-o) %q is not supported: use -o table or -o json", o.output)
			}
			return run(cmd.Context(), io, clk, newClient, o, args[0])
		},
	}
	o.kube.AddFlags(cmd.Flags(), "the hub")
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringVar(&o.viaHub, "via-hub", "",
		"ask the hub's explanation server at https://HOST:PORT (flotilla hub --explain-bind-address) instead of computing here; "+
			"sends the kubeconfig's bearer token; -o json only")
	cmd.Flags().StringVar(&o.viaHubCA, "via-hub-ca", "", "PEM file of the authority that signed the explanation server's certificate (default: the system's roots)")
	return cmd
}

func run(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, o options, arg string) error {
	c, hub, err := newClient(o.kube)
	if err != nil {
		return err
	}
	ns, name, err := namespacedName("placement", arg, hub.Namespace)
	if err != nil {
		return err
	}
	if o.viaHub != "" {
		return runViaHub(ctx, io, hub, o, ns, name)
	}
	e, err := placementview.Compute(ctx, c, clk, ns, name)
	if err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("placement %s/%s is not on the hub of kubeconfig %s: list them with `%s`",
				ns, name, hub.Source, strings.TrimSpace("flotilla get placements -n "+ns+" "+o.kube.Args()))
		case meta.IsNoMatchError(err):
			return fmt.Errorf("the hub of kubeconfig %s does not serve placements: %w; install the CRDs with `%s`",
				hub.Source, err, strings.TrimSpace("flotilla install crds "+o.kube.Args()))
		}
		return fmt.Errorf("%w, on the hub of kubeconfig %s", err, hub.Source)
	}
	if o.output == "json" {
		b, err := json.MarshalIndent(placementview.NewOutput(ns, name, &e.Result), "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(io.Out, "%s\n", b)
		return err
	}
	if err := placementview.WriteTable(io.Out, ns, name, &e.Result); err != nil {
		return err
	}
	for _, n := range e.Notes() {
		if _, err := fmt.Fprintf(io.Out, "\n%s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// namespacedName reads NAMESPACE/NAME, or NAME in the kubeconfig context's namespace (context).
func namespacedName(kind, arg, context string) (ns, name string, err error) {
	ns, name, ok := strings.Cut(arg, "/")
	if !ok {
		ns, name = context, arg
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%s %q: give it as NAMESPACE/NAME, or NAME in the kubeconfig context's namespace", kind, arg)
	}
	return ns, name, nil
}
