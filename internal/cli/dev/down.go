package dev

import (
	"github.com/spf13/cobra"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/devfleet"
)

func newDownCommand(io streams.IO, stateDir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop the local fleet and remove the files `dev up` made (other files in the state folder are kept)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return devfleet.Down(*stateDir, io.Out)
		},
	}
}
