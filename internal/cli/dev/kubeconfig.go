package dev

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/devfleet"
)

func newKubeconfigCommand(io streams.IO, stateDir *string) *cobra.Command {
	return &cobra.Command{
		Use:     "kubeconfig CLUSTER",
		Short:   "Print the path of a cluster's admin kubeconfig (hub for the hub)",
		Example: `  kubectl --kubeconfig "$(flotilla dev kubeconfig gpu-east)" get nodes`,
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			st, err := devfleet.Load(*stateDir)
			if err != nil {
				return err
			}
			c, err := st.Cluster(args[0])
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(io.Out, c.Kubeconfig)
			return err
		},
	}
}
