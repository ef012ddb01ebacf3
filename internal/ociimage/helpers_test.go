package ociimage

import (
	"archive/tar"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const testRef = "ghcr.io/flotilla/flotilla:v0.3.0-test"

var testCreated = time.Date(2026, 12, 2, 7, 14, 46, 0, time.UTC)

var (
	amd64 = Platform{OS: "linux", Architecture: "amd64"}
	arm64 = Platform{OS: "linux", Architecture: "arm64"}
)

// testSpec writes a fake static binary per platform under dir and returns a Spec over them and
// the binaries' bytes.
func testSpec(t *testing.T, dir string) (Spec, map[Platform][]byte) {
	t.Helper()
	bins := map[Platform][]byte{
		amd64: fakeELF(t, elf.EM_X86_64, "", "flotilla for amd64"),
		arm64: fakeELF(t, elf.EM_AARCH64, "", "flotilla for arm64"),
	}
	spec := Spec{
		Ref:     testRef,
		Version: "v0.3.0-test",
		Commit:  "0123456789abcdef0123456789abcdef01234567",
		Created: testCreated,
	}
	for _, p := range []Platform{amd64, arm64} {
		path := writeTestFile(t, dir, p.OS+"-"+p.Architecture+"/flotilla", bins[p])
		spec.Binaries = append(spec.Binaries, Binary{Platform: p, Path: path})
	}
	return spec, bins
}

// buildAndWrite builds spec and writes its tarballs under a fresh folder.
func buildAndWrite(t *testing.T, spec Spec) (*Images, []Artifact) {
	t.Helper()
	im, err := Build(spec)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	arts, err := im.Write(filepath.Join(t.TempDir(), "images"))
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return im, arts
}

// tarEntry is what a test checks of one archive member.
type tarEntry struct {
	Name    string
	Type    byte
	Mode    int64
	UID     int
	GID     int
	ModTime time.Time
	Body    string
}

// readTar lists the members of the tar r, with their bodies.
func readTar(t *testing.T, r io.Reader) []tarEntry {
	t.Helper()
	tr := tar.NewReader(r)
	var out []tarEntry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{Name: hdr.Name, Type: hdr.Typeflag, Mode: hdr.Mode, UID: hdr.Uid, GID: hdr.Gid,
			ModTime: hdr.ModTime.UTC(), Body: string(body)})
	}
}

// untar unpacks the tarball at path into a fresh folder and returns it.
func untar(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	dir := t.TempDir()
	for _, e := range readTar(t, f) {
		p := filepath.Join(dir, filepath.FromSlash(e.Name))
		if e.Type == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(e.Body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tarNames lists the member names of the tarball at path.
func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var names []string
	for _, e := range readTar(t, f) {
		names = append(names, e.Name)
	}
	return names
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func artifactFor(t *testing.T, arts []Artifact, platform string) Artifact {
	t.Helper()
	for _, a := range arts {
		if a.Platform == platform {
			return a
		}
	}
	t.Fatalf("no artifact for %s in %+v", platform, arts)
	return Artifact{}
}
