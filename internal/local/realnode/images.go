package realnode

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// PauseImage is the sandbox image every real node imports and containerd's CRI uses
// (sandbox_image): registry.k8s.io/pause cannot be pulled here.
const PauseImage = "flotilla.local/pause:1"

// writePauseImage writes the pause image, made of the static program tools/build.sh builds
// (tools/cmd/pause), as a `docker save` archive that `ctr images import` reads.
func writePauseImage(binary, path string) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("reading the pause program: %w (tools/build.sh builds it beside the Kubernetes binaries)", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "pause", Mode: 0o755, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerBytes)), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	// As registry.k8s.io/pause: the nobody-like user 65535, nothing else.
	cfg.Config = v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	tag, err := name.NewTag(PauseImage)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return tarball.WriteToFile(path, tag, img)
}

// ImportImage loads an image archive (docker save or OCI layout) into the containerd of the
// running node on network n, in the k8s.io namespace the CRI reads, as `kind load image-archive`
// does.
func ImportImage(n Network, archive string) error {
	out, err := run("ctr", "--address", n.socket(), "--namespace", "k8s.io", "images", "import", archive)
	if err != nil {
		return fmt.Errorf("real node %s: importing image archive %s: %w: %s", n.Namespace(), archive, err, lastLines(out, 5))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
