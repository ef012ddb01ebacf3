package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/flotilla/flotilla/internal/ociimage"
)

// FlotillaImage builds ./cmd/flotilla of this module statically for this machine and packs it
// into dir as `make image` does (internal/ociimage), for real nodes to import. It returns the
// archive for this platform, the image's reference, and the binary (usable as the CLI too).
func FlotillaImage(t testing.TB, dir string) (archive, ref, binary string) {
	t.Helper()
	binary = filepath.Join(dir, "flotilla")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := goBuildFlotilla(binary, "CGO_ENABLED=0"); err != nil {
		t.Fatal(err)
	}
	ref = "ghcr.io/flotilla/flotilla:test"
	return PackFlotillaImage(t, binary, dir, ref), ref, binary
}

// PackFlotillaImage packs a static flotilla binary as image ref (as `make image` does) into dir
// and returns the archive for this machine's platform.
func PackFlotillaImage(t testing.TB, binary, dir, ref string) string {
	t.Helper()
	p := ociimage.Platform{OS: "linux", Architecture: runtime.GOARCH}
	im, err := ociimage.Build(ociimage.Spec{Ref: ref, Version: "test", Commit: "test", Created: time.Unix(0, 0), Binaries: []ociimage.Binary{{Platform: p, Path: binary}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	arts, err := im.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		if a.Platform == p.String() {
			return a.Path
		}
	}
	t.Fatalf("no archive for %s among %+v", p, arts)
	return ""
}
