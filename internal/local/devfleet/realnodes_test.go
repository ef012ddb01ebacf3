package devfleet

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Images to load are refused before anything starts: without real nodes (simulated nodes run no
// images), and when the archive is not there. Nothing is left in the state folder.
func TestUpRefusesImagesItCannotLoad(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "flotilla-linux-amd64.tar")
	if err := os.WriteFile(archive, []byte("not read here"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		realNodes bool
		images    []string
		want      string
	}{
		"without real nodes": {images: []string{archive}, want: "need real nodes: add --real-nodes"},
		"missing archive":    {realNodes: true, images: []string{archive + ".gone"}, want: "image archive to load: stat " + archive + ".gone"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			_, err := Up(context.Background(), UpOptions{
				StateDir: dir, Fleet: &fleet.Fleet{}, Binaries: localk8s.Binaries{Dir: t.TempDir()},
				RealNodes: tc.realNodes, Images: tc.images, Out: io.Discard, Clock: clock.RealClock{},
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Up: %v, want an error containing %q", err, tc.want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("Up left the state folder %s behind", dir)
			}
		})
	}
}
