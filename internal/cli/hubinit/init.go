package hubinit

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/cli/chartflags"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/install"
)

// NewCommand returns `flotilla init`.
func NewCommand(io streams.IO) *cobra.Command {
	var kube kubeflags.Flags
	var output string
	var ttl time.Duration
	var inst bool
	var chart chartflags.Flags
	var replicas int
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Prepare a hub: install the CRDs and the bootstrap identity, and print how to join clusters",
		Long: "Installs the CRDs, creates the bootstrap service account (it may only create its ManagedCluster and\n" +
			"certificate requests), writes a bootstrap kubeconfig with a token valid for --token-ttl, and prints\n" +
			"the agent command that joins a cluster.\n\n" +
			"With --install it first installs the hub itself into the cluster (the flotilla-hub Helm chart's objects,\n" +
			"applied server-side, and its CRDs), waits until its Deployment is ready, and prints the `flotilla join\n" +
			"--install` command for spokes. It refuses a cluster where OCM's hub or a Flotilla hub of another version\n" +
			"runs, and values the chart or the API server refuses, before changing anything.",
		Example: "  flotilla init --install --image-pull-policy Never   # after kind load image-archive\n" +
			"  flotilla init --install --set replicas=3 --set resources.limits.memory=2Gi",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hub, err := kube.Load()
			if err != nil {
				return err
			}
			cfg := hub.Config
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute+chart.Wait)
			defer cancel()
			if inst {
				if err := installHub(ctx, io, cfg, chart, replicas); err != nil {
					return err
				}
			}
			if _, err := install.Embedded(ctx, cfg, install.Options{}); err != nil {
				return err
			}
			if err := install.AgentRoles(ctx, cfg); err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			if err := registration.EnsureBootstrapIdentity(ctx, cs); err != nil {
				return err
			}
			data, err := registration.BootstrapKubeconfig(ctx, cs, cfg, ttl)
			if err != nil {
				return err
			}
			if err := os.WriteFile(output, data, 0o600); err != nil {
				return fmt.Errorf("writing the bootstrap kubeconfig: %w", err)
			}
			if inst {
				_, err = fmt.Fprintf(io.Out, `Join a cluster by running, with that cluster's kubeconfig (or --context):

  flotilla join --install --cluster-name <name> --bootstrap-kubeconfig %s --kubeconfig <cluster kubeconfig>

then accept it on the hub:

  %s

The bootstrap kubeconfig can only register clusters; its token expires in %s.
`, output, strings.TrimSpace("flotilla accept <name> "+kube.Args()), ttl)
				return err
			}
			_, err = fmt.Fprintf(io.Out, `The hub is ready. Join a cluster by running, with that cluster's kubeconfig:

  flotilla agent --cluster-name <name> --bootstrap-kubeconfig %s --kubeconfig <cluster kubeconfig>

then accept it on the hub:

  %s

The bootstrap kubeconfig can only register clusters; its token expires in %s.
`, output, strings.TrimSpace("flotilla accept <name> "+kube.Args()), ttl)
			return err
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub cluster")
	cmd.Flags().StringVar(&output, "bootstrap-kubeconfig", "bootstrap.kubeconfig", "file to write the bootstrap kubeconfig to")
	cmd.Flags().DurationVar(&ttl, "token-ttl", 24*time.Hour, "how long the bootstrap token is valid")
	f := cmd.Flags()
	f.BoolVar(&inst, "install", false, "install the hub into the cluster (the flotilla-hub chart) before preparing the bootstrap identity")
	f.IntVar(&replicas, "replicas", 0, "with --install: replicas of the hub (default: the chart's, 2)")
	chart.AddFlags(f, "hub", "open-cluster-management-hub")
	return cmd
}
