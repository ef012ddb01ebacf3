package describe

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

func newFederatedLearningCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var kube kubeflags.Flags
	var namespace string
	cmd := &cobra.Command{
		Use:     "federatedlearning NAME",
		Aliases: []string{"federatedlearnings", "fl", "fls"},
		Short:   "Show a FederatedLearning: its spec, conditions, clients, rounds and timeline",
		Long: "Reads a FederatedLearning from the hub and prints its spec (framework, images, rounds,\n" +
			"minAvailableClients, the placement's cluster sets and data claim, and the SuperLink and SuperNode for\n" +
			"flower or the listeners and storage otherwise), then its status: phase and message, conditions,\n" +
			"each client cluster's state, the training's progress (last round, metrics, and the clusters each of\n" +
			"the last 10 rounds took), where the server listens, and the last 20 entries of its timeline.\n\n" +
			"The FederatedLearning is looked up in the namespace of -n, else of the kubeconfig's context.\n" +
			"`flotilla get fl -A` lists them.",
		Example: `  flotilla describe fl mnist -n research
  flotilla describe federatedlearning mnist --kubeconfig "$(flotilla dev kubeconfig hub)"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := parseFederatedLearningArg(args)
			if err != nil {
				return err
			}
			return runFederatedLearning(cmd.Context(), io, clk, newClient, kube, namespace, name)
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace of the FederatedLearning (default: the kubeconfig context's namespace)")
	return cmd
}

// parseFederatedLearningArg reads NAME before anything reaches the hub.
func parseFederatedLearningArg(args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("flotilla describe federatedlearning takes one FederatedLearning NAME, got %d arguments: for example `flotilla describe fl mnist -n research`", len(args))
	}
	if strings.Contains(args[0], "/") {
		return "", fmt.Errorf("FederatedLearning %q: give its name and its namespace with -n (for example `flotilla describe fl mnist -n research`)", args[0])
	}
	return args[0], nil
}

func runFederatedLearning(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, kube kubeflags.Flags, ns, name string) error {
	c, hub, err := newClient(kube)
	if err != nil {
		return err
	}
	if ns == "" {
		ns = hub.Namespace
	}
	var fl flv1alpha1.FederatedLearning
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &fl); err != nil {
		return getError(err, hub, kube, "FederatedLearning", "federatedlearnings", ns, name,
			fmt.Sprintf("no FederatedLearning %s in namespace %s on the hub of kubeconfig %s: list them with `%s` (or in every namespace with -A)",
				name, ns, hub.Source, command("flotilla get fl -n "+ns, kube)))
	}
	return writeFederatedLearning(io.Out, &fl, clk)
}
