package version

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/localk8s"
	v "github.com/flotilla/flotilla/internal/version"
)

// NewCommand returns `flotilla version`.
func NewCommand(io streams.IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of flotilla and of the Kubernetes it runs locally",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(io.Out, "flotilla %s (%s, %s/%s)\nlocal fleets: Kubernetes %s, kwok %s\n",
				v.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, localk8s.KubernetesVersion, localk8s.KwokVersion)
			return err
		},
	}
}
