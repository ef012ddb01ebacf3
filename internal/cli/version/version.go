package version

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	v "github.com/flotilla/flotilla/internal/version"
)

// NewCommand returns `flotilla version`.
func NewCommand(io streams.IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and image of flotilla and the Kubernetes it runs locally",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(io.Out, text())
			return err
		},
	}
}

func text() string {
	return fmt.Sprintf("flotilla %s (%s, %s/%s)\ncommit: %s\nimage: %s\nlocal fleets: Kubernetes %s, kwok %s\n",
		v.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, v.Revision(), v.ImageRef(),
		localk8s.KubernetesVersion, localk8s.KwokVersion)
}
