package hubinit

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/localk8s"
)

// NewCommand returns `flotilla init`.
func NewCommand(io streams.IO) *cobra.Command {
	var kubeconfig, output string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Prepare a hub: install the CRDs and the bootstrap identity, and print how to join clusters",
		Long: "Installs the CRDs, creates the bootstrap service account (it may only create its ManagedCluster and\n" +
			"certificate requests), writes a bootstrap kubeconfig with a token valid for --token-ttl, and prints\n" +
			"the agent command that joins a cluster.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kubeconfig == "" {
				return fmt.Errorf("--kubeconfig is required: the hub cluster's kubeconfig")
			}
			cfg, err := localk8s.RESTConfigFromKubeconfig(kubeconfig)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			if _, err := install.Embedded(ctx, cfg, install.Options{}); err != nil {
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
			_, err = fmt.Fprintf(io.Out, `The hub is ready. Join a cluster by running, with that cluster's kubeconfig:

  flotilla agent --cluster-name <name> --bootstrap-kubeconfig %s --kubeconfig <cluster kubeconfig>

then accept it on the hub:

  flotilla accept <name> --kubeconfig %s

The bootstrap kubeconfig can only register clusters; its token expires in %s.
`, output, kubeconfig, ttl)
			return err
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the hub cluster (required)")
	cmd.Flags().StringVar(&output, "bootstrap-kubeconfig", "bootstrap.kubeconfig", "file to write the bootstrap kubeconfig to")
	cmd.Flags().DurationVar(&ttl, "token-ttl", 24*time.Hour, "how long the bootstrap token is valid")
	return cmd
}
