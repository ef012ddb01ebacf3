package version

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	v "github.com/flotilla/flotilla/internal/version"
)

func TestVersionPrintsStampedValues(t *testing.T) {
	oldVersion, oldCommit, oldImage := v.Version, v.Commit, v.Image
	t.Cleanup(func() { v.Version, v.Commit, v.Image = oldVersion, oldCommit, oldImage })
	v.Version, v.Commit, v.Image = "v0.3.0", "0123456789abcdef0123456789abcdef01234567", "ghcr.io/flotilla/flotilla:v0.3.0"

	io, out, _ := streams.Buffers()
	cmd := NewCommand(io)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("flotilla version: %v", err)
	}
	want := fmt.Sprintf("flotilla v0.3.0 (%s, %s/%s)\n"+
		"commit: 0123456789abcdef0123456789abcdef01234567\n"+
		"image: ghcr.io/flotilla/flotilla:v0.3.0\n"+
		"local fleets: Kubernetes %s, kwok %s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, localk8s.KubernetesVersion, localk8s.KwokVersion)
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
