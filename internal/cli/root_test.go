package cli

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flotilla/flotilla/internal/cli/streams"
)

// TestEveryClusterCommandFindsItsKubeconfigAsKubectl checks that every command that talks to a
// cluster takes its kubeconfig from the one shared loader (kubeflags): --kubeconfig optional
// with the kubectl defaults, and --context.
func TestEveryClusterCommandFindsItsKubeconfigAsKubectl(t *testing.T) {
	io, _, _ := streams.Buffers()
	root := NewRootCommand(io, clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	var got []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("kubeconfig"); f != nil {
			got = append(got, c.CommandPath())
			if !strings.Contains(f.Usage, "$KUBECONFIG, else ~/.kube/config") {
				t.Errorf("%s --kubeconfig: usage %q does not name the kubectl defaults: add it with kubeflags.Flags.AddFlags", c.CommandPath(), f.Usage)
			}
			if c.Flags().Lookup("context") == nil {
				t.Errorf("%s has --kubeconfig but no --context: add both with kubeflags.Flags.AddFlags", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(got)
	want := []string{
		"flotilla accept", "flotilla addon disable", "flotilla addon enable", "flotilla agent", "flotilla credentials-plugin", "flotilla dashboard", "flotilla describe cluster", "flotilla describe federatedlearning", "flotilla describe policy", "flotilla describe work", "flotilla explain placement", "flotilla explain policy", "flotilla explain workload", "flotilla get", "flotilla hub", "flotilla init",
		"flotilla install crds", "flotilla join", "flotilla mcp", "flotilla uninstall",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands with --kubeconfig (-want +got):\n%s", diff)
	}
}
