package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla/flotilla/internal/cli/accept"
	"github.com/flotilla/flotilla/internal/cli/addon"
	"github.com/flotilla/flotilla/internal/cli/agent"
	"github.com/flotilla/flotilla/internal/cli/credentialsplugin"
	"github.com/flotilla/flotilla/internal/cli/dashboard"
	"github.com/flotilla/flotilla/internal/cli/describe"
	"github.com/flotilla/flotilla/internal/cli/dev"
	"github.com/flotilla/flotilla/internal/cli/explain"
	"github.com/flotilla/flotilla/internal/cli/flowerfront"
	"github.com/flotilla/flotilla/internal/cli/get"
	"github.com/flotilla/flotilla/internal/cli/hub"
	"github.com/flotilla/flotilla/internal/cli/hubinit"
	"github.com/flotilla/flotilla/internal/cli/install"
	"github.com/flotilla/flotilla/internal/cli/join"
	"github.com/flotilla/flotilla/internal/cli/mcp"
	"github.com/flotilla/flotilla/internal/cli/placement"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/cli/uninstall"
	"github.com/flotilla/flotilla/internal/cli/version"
)

// NewRootCommand returns the flotilla command with every subcommand, each reading time from clk
// (the dashboard's live views tick on it).
func NewRootCommand(io streams.IO, clk clock.WithTicker) *cobra.Command {
	root := &cobra.Command{
		Use:   "flotilla",
		Short: "Flotilla schedules AI workloads across a fleet of Kubernetes clusters",
		Long: "Flotilla is a hub for a fleet of Kubernetes clusters that serves the Open Cluster Management APIs\n" +
			"and schedules AI training and inference across the fleet.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var verbosity int
	root.PersistentFlags().IntVar(&verbosity, "v", 0, "log verbosity")
	root.PersistentPreRun = func(*cobra.Command, []string) {
		// One logger for every library that logs through controller-runtime (clients, the hub's
		// manager, the agent), on standard error.
		ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.ErrOut), textlogger.Verbosity(verbosity))))
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.AddCommand(
		version.NewCommand(io),
		dev.NewCommand(io, clk),
		install.NewCommand(io),
		uninstall.NewCommand(io),
		hubinit.NewCommand(io),
		hub.NewCommand(io, clk),
		join.NewCommand(io),
		agent.NewCommand(io, clk),
		accept.NewCommand(io, clk),
		get.NewCommand(io, clk),
		describe.NewCommand(io, clk),
		placement.NewCommand(io, clk),
		explain.NewCommand(io, clk),
		addon.NewCommand(io),
		mcp.NewCommand(io, clk),
		dashboard.NewCommand(io, clk),
		credentialsplugin.NewCommand(io, clk),
		flowerfront.NewCommand(io),
	)
	return root
}
