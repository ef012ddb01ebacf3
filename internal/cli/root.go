package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/dev"
	"github.com/flotilla/flotilla/internal/cli/install"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/cli/version"
)

// NewRootCommand returns the flotilla command with every subcommand.
func NewRootCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	root := &cobra.Command{
		Use:   "flotilla",
		Short: "Flotilla schedules AI workloads across a fleet of Kubernetes clusters",
		Long: "Flotilla is a hub for a fleet of Kubernetes clusters that serves the Open Cluster Management APIs\n" +
			"and schedules AI training and inference across the fleet.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.AddCommand(version.NewCommand(io), dev.NewCommand(io, clk), install.NewCommand(io))
	return root
}
