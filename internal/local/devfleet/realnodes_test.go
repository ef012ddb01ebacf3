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

// Real nodes are refused before anything starts when they cannot run as asked: images to load
// without real nodes (simulated nodes run no images), an archive that is not there, no CoreDNS
// binary for the nodes' cluster DNS. Nothing is left in the state folder.
func TestUpRefusesRealNodesItCannotRun(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "flotilla-linux-amd64.tar")
	coreDNS := filepath.Join(t.TempDir(), "coredns")
	for _, f := range []string{archive, coreDNS} {
		if err := os.WriteFile(f, []byte("not read here"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		realNodes bool
		images    []string
		coreDNS   string
		want      string
	}{
		"without real nodes": {images: []string{archive}, want: "need real nodes: add --real-nodes"},
		"missing archive":    {realNodes: true, images: []string{archive + ".gone"}, coreDNS: coreDNS, want: "image archive to load: stat " + archive + ".gone"},
		"no CoreDNS":         {realNodes: true, want: "UpOptions.CoreDNS is empty: no CoreDNS binary for the real node's cluster DNS: run `make coredns-bin` (tools/build-coredns.sh)"},
		"missing CoreDNS":    {realNodes: true, coreDNS: coreDNS + ".gone", want: "(no file " + coreDNS + ".gone)"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			_, err := Up(context.Background(), UpOptions{
				StateDir: dir, Fleet: &fleet.Fleet{}, Binaries: localk8s.Binaries{Dir: t.TempDir()},
				RealNodes: tc.realNodes, Images: tc.images, CoreDNS: tc.coreDNS, Out: io.Discard, Clock: clock.RealClock{},
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
