package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// NonrootID is the user and group the image runs as; 65532 is distroless's "nonroot", so
	// Kubernetes policies written for distroless images (runAsUser, fsGroup) fit as they are.
	NonrootID = 65532
	// BinaryPath is where the flotilla binary sits in the image, and the entrypoint.
	BinaryPath = "/flotilla"
)

// The home directory does not exist: nothing in the image is the user's to write.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nonroot:x:65532:\n"
)

// layer is a gzip layer kept in memory, with the size of the tar inside it.
type layer struct {
	v1.Layer
	uncompressedSize int64
}

// buildLayer writes the image's one layer: the binary at path (size bytes) as /flotilla and the
// files a non-root image needs, every header stamped with mtime.
func buildLayer(path string, size int64, mtime time.Time) (*layer, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	counted := &countingWriter{w: zw}
	tw := tar.NewWriter(counted)
	hdr := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: mtime, Format: tar.FormatPAX}
	}
	small := []struct {
		hdr  *tar.Header
		body string
	}{
		{hdr: hdr("etc/", tar.TypeDir, 0o755, 0)},
		{hdr: hdr("etc/group", tar.TypeReg, 0o644, int64(len(group))), body: group},
		{hdr: hdr("etc/passwd", tar.TypeReg, 0o644, int64(len(passwd))), body: passwd},
	}
	for _, e := range small {
		if err := tw.WriteHeader(e.hdr); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(hdr(BinaryPath[1:], tar.TypeReg, 0o755, size)); err != nil {
		return nil, err
	}
	if err := copyFile(tw, path, size); err != nil {
		return nil, err
	}
	// Go's os.TempDir is /tmp; sticky and world-writable as on any Linux.
	if err := tw.WriteHeader(hdr("tmp/", tar.TypeDir, 0o1777, 0)); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}

	compressed := gz.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(compressed)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer for %s: %w", path, err)
	}
	return &layer{Layer: l, uncompressedSize: counted.n}, nil
}

// copyFile copies exactly size bytes of path, so a binary rewritten since it was checked fails
// here rather than yielding a layer that does not match its header.
func copyFile(w io.Writer, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	n, err := io.Copy(w, f)
	if err != nil {
		return fmt.Errorf("copying %s into the layer: %w", path, err)
	}
	if n != size {
		return fmt.Errorf("copying %s into the layer: it changed while the image was built (%d bytes, then %d); build again", path, size, n)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
