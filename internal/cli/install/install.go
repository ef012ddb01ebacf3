package install

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/install"
)

// NewCommand returns `flotilla install` and its subcommands.
func NewCommand(io streams.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install Flotilla's parts on a cluster",
	}
	cmd.AddCommand(newCRDsCommand(io))
	return cmd
}

func newCRDsCommand(io streams.IO) *cobra.Command {
	var kube kubeflags.Flags
	var dryRun bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "crds",
		Short: "Apply the OCM and Flotilla CRDs (server-side apply) and wait until they are served",
		Long: "Applies every CRD this binary embeds with server-side apply under the field manager \"flotilla\" and\n" +
			"waits until each is Established. Running it again changes nothing. --dry-run asks the API server\n" +
			"what would change and changes nothing.",
		Example: `  flotilla install crds --kubeconfig "$(flotilla dev kubeconfig hub)" --dry-run`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cluster, err := kube.Load()
			if err != nil {
				return err
			}
			cfg := cluster.Config
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout+30*time.Second)
			defer cancel()
			_, err = install.Embedded(ctx, cfg, install.Options{DryRun: dryRun, Out: io.Out, Timeout: timeout})
			return err
		},
	}
	kube.AddFlags(cmd.Flags(), "the cluster to install the CRDs on")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would change; change nothing")
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "how long to wait for the CRDs to be Established")
	return cmd
}
