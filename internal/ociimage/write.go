package ociimage

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Artifact is a tarball Write wrote.
type Artifact struct {
	Path string
	// Platform is "linux/amd64" and so on, or "index" for the multi-arch tarball.
	Platform string
	// Digest is the image manifest's digest, or the image index's: what a registry will report
	// once the tarball is pushed.
	Digest v1.Hash
	// FileSize is the tarball's size.
	FileSize int64
	// CompressedSize is the blobs a pull downloads: manifest, config and gzip layers (for the index,
	// those of every platform and the index itself).
	CompressedSize int64
	// UncompressedSize is the layers unpacked (for the index, summed over the platforms).
	UncompressedSize int64
}

// IndexPlatform is Artifact.Platform for the multi-arch tarball.
const IndexPlatform = "index"

// Write writes one tarball per platform, <name>-<os>-<arch>.tar, and the multi-arch
// <name>.tar into dir, where <name> is the last element of the image's repository.
func (im *Images) Write(dir string) ([]Artifact, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := path.Base(im.Ref.RepositoryStr())
	var out []Artifact
	index := Artifact{Path: filepath.Join(dir, base+".tar"), Platform: IndexPlatform}
	for _, pi := range im.Platforms {
		a := Artifact{
			Path:             filepath.Join(dir, fmt.Sprintf("%s-%s-%s.tar", base, pi.Platform.OS, pi.Platform.Architecture)),
			Platform:         pi.Platform.String(),
			UncompressedSize: pi.UncompressedSize,
		}
		var err error
		if a.Digest, err = pi.Image.Digest(); err != nil {
			return nil, err
		}
		if a.CompressedSize, err = compressedSize(pi.Image); err != nil {
			return nil, err
		}
		if a.FileSize, err = writeFile(a.Path, func(w io.Writer) error { return writeImageArchive(w, im.Ref, pi, im.Created) }); err != nil {
			return nil, err
		}
		out = append(out, a)
		index.CompressedSize += a.CompressedSize
		index.UncompressedSize += a.UncompressedSize
	}
	index.Digest = im.Index.Digest
	index.CompressedSize += im.Index.Size
	var err error
	if index.FileSize, err = writeFile(index.Path, func(w io.Writer) error { return writeIndexArchive(w, im) }); err != nil {
		return nil, err
	}
	return append(out, index), nil
}

func compressedSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	size, err := img.Size()
	if err != nil {
		return 0, err
	}
	size += m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}

// writeFile writes p through a temporary file in its folder, so a failed build leaves no
// half-written tarball under the final name, and returns its size.
func writeFile(p string, write func(io.Writer) error) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+strings.TrimSuffix(filepath.Base(p), ".tar")+"-*.tmp")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := write(tmp); err != nil {
		_ = tmp.Close()
		return 0, fmt.Errorf("writing %s: %w", p, err)
	}
	info, err := tmp.Stat()
	if err != nil {
		_ = tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, err
	}
	return info.Size(), os.Rename(tmp.Name(), p)
}
