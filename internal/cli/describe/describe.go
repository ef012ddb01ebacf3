package describe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// NewCommand returns `flotilla describe`.
func NewCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	return newCommand(io, clk, kubeflags.NewHubReader)
}

func newCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show one object of the hub in detail: a ManifestWork, a FederatedLearning, a ManagedCluster or a Policy",
	}
	cmd.AddCommand(newWorkCommand(io, clk, newClient), newFederatedLearningCommand(io, clk, newClient), newClusterCommand(io, clk, newClient),
		newPolicyCommand(io, clk, newClient))
	return cmd
}

func newWorkCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var kube kubeflags.Flags
	cmd := &cobra.Command{
		Use:     "work CLUSTER/NAME",
		Aliases: []string{"works", "manifestwork", "manifestworks", "mw"},
		Short:   "Show a ManifestWork: its conditions, and each manifest's conditions and status feedback",
		Long: "Reads a ManifestWork from the hub and prints the ManifestWorkReplicaSet that made it, its deleteOption\n" +
			"and executor when set, its conditions, then each manifest (ordinal, kind, namespace/name) with the\n" +
			"conditions (Applied, Available, StatusFeedbackSynced and those of its condition rules) and the status\n" +
			"feedback values (name = value (type)) the cluster's work agent reported.\n\n" +
			"A work is in the namespace named after its cluster: give it as CLUSTER/NAME. `flotilla get works -A`\n" +
			"lists them.",
		Example: `  flotilla describe work gpu-east/train
  flotilla describe work gpu-east/train --kubeconfig "$(flotilla dev kubeconfig hub)"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, err := parseWorkArg(args)
			if err != nil {
				return err
			}
			return runWork(cmd.Context(), io, clk, newClient, kube, ns, name)
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub")
	return cmd
}

// parseWorkArg reads CLUSTER/NAME before anything reaches the hub.
func parseWorkArg(args []string) (ns, name string, err error) {
	if len(args) != 1 {
		return "", "", fmt.Errorf("flotilla describe work takes one ManifestWork as NAMESPACE/NAME, got %d arguments: for example gpu-east/train", len(args))
	}
	ns, name, ok := strings.Cut(args[0], "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("ManifestWork %q: give it as NAMESPACE/NAME, the namespace being its cluster's name (for example gpu-east/train); `flotilla get works -A` lists them", args[0])
	}
	return ns, name, nil
}

func runWork(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, kube kubeflags.Flags, ns, name string) error {
	c, hub, err := newClient(kube)
	if err != nil {
		return err
	}
	var mw workv1.ManifestWork
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &mw); err != nil {
		return getError(err, hub, kube, "ManifestWork", "manifestworks", ns, name,
			fmt.Sprintf("no ManifestWork %s/%s on the hub of kubeconfig %s: list them with `%s`", ns, name, hub.Source, command("flotilla get works -A", kube)))
	}
	return writeWork(io.Out, &mw, clk)
}

// command is cmd followed by the flags that select the same kubeconfig again.
func command(cmd string, kube kubeflags.Flags) string {
	return strings.TrimSpace(cmd + " " + kube.Args())
}

// server is " at URL" when the configuration names the hub's API server.
func server(hub *kubeflags.Loaded) string {
	if hub.Config == nil || hub.Config.Host == "" {
		return ""
	}
	return " at " + hub.Config.Host
}

// getError explains a failed read of one object on the hub: notFound when it does not exist,
// else the CRDs missing, the user not allowed, or the hub not reachable, each with the fix.
func getError(err error, hub *kubeflags.Loaded, kube kubeflags.Flags, kind, plural, ns, name, notFound string) error {
	switch {
	case apierrors.IsNotFound(err):
		return errors.New(notFound)
	case meta.IsNoMatchError(err):
		return fmt.Errorf("the hub of kubeconfig %s does not serve %ss: %w; install the CRDs with `%s`",
			hub.Source, kind, err, command("flotilla install crds", kube))
	case apierrors.IsForbidden(err):
		return fmt.Errorf("reading %s %s/%s on the hub of kubeconfig %s: %w; use a kubeconfig whose user may get %s in namespace %s",
			kind, ns, name, hub.Source, err, plural, ns)
	default:
		return fmt.Errorf("reading %s %s/%s on the hub of kubeconfig %s: %w; check that the hub's API server%s is up and reachable, or pass the hub's kubeconfig with --kubeconfig",
			kind, ns, name, hub.Source, err, server(hub))
	}
}
