package dev

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/streams"
)

// StateDirEnv overrides the default state folder.
const StateDirEnv = "FLOTILLA_DEV_DIR"

// NewCommand returns `flotilla dev` and its subcommands.
func NewCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local fleet: a hub and spoke clusters with simulated GPU nodes",
	}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", defaultStateDir(),
		"folder holding the running fleet's state, certificates, kubeconfigs and logs (env "+StateDirEnv+")")
	cmd.AddCommand(
		newUpCommand(io, clk, &stateDir),
		newStatusCommand(io, &stateDir),
		newDownCommand(io, &stateDir),
		newKubeconfigCommand(io, &stateDir),
	)
	return cmd
}

func defaultStateDir() string {
	if d := os.Getenv(StateDirEnv); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "flotilla", "dev")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "flotilla-dev")
	}
	return filepath.Join(home, ".local", "state", "flotilla", "dev")
}
