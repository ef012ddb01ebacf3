package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// tarWriter writes an archive whose headers all carry one time and which holds each blob once.
type tarWriter struct {
	tw      *tar.Writer
	mtime   time.Time
	written map[string]bool
}

func newTarWriter(w io.Writer, mtime time.Time) *tarWriter {
	return &tarWriter{tw: tar.NewWriter(w), mtime: mtime, written: map[string]bool{}}
}

func (w *tarWriter) header(name string, typ byte, mode, size int64) error {
	return w.tw.WriteHeader(&tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: w.mtime, Format: tar.FormatPAX})
}

func (w *tarWriter) dir(name string) error {
	if w.written[name] {
		return nil
	}
	w.written[name] = true
	return w.header(name, tar.TypeDir, 0o755, 0)
}

func (w *tarWriter) file(name string, data []byte) error {
	if err := w.header(name, tar.TypeReg, 0o644, int64(len(data))); err != nil {
		return err
	}
	_, err := w.tw.Write(data)
	return err
}

func (w *tarWriter) json(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.file(name, b)
}

// blobPath is where a blob sits in an OCI image layout.
func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// blob writes the blob h (size bytes) read from open, once.
func (w *tarWriter) blob(h v1.Hash, size int64, open func() (io.ReadCloser, error)) error {
	p := blobPath(h)
	if w.written[p] {
		return nil
	}
	w.written[p] = true
	if err := w.dir("blobs/"); err != nil {
		return err
	}
	if err := w.dir("blobs/" + h.Algorithm + "/"); err != nil {
		return err
	}
	r, err := open()
	if err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	defer func() { _ = r.Close() }()
	if err := w.header(p, tar.TypeReg, 0o644, size); err != nil {
		return err
	}
	if n, err := io.Copy(w.tw, r); err != nil || n != size {
		return fmt.Errorf("blob %s: wrote %d of %d bytes: %v", h, n, size, err)
	}
	return nil
}

// rawBlob writes b as a blob and returns its digest.
func (w *tarWriter) rawBlob(b []byte) (v1.Hash, error) {
	h, size, err := v1.SHA256(bytes.NewReader(b))
	if err != nil {
		return v1.Hash{}, err
	}
	return h, w.blob(h, size, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

// image writes img's manifest, config and layers.
func (w *tarWriter) image(img v1.Image) error {
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	if _, err := w.rawBlob(raw); err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	if _, err := w.rawBlob(cfg); err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		if err := w.blob(h, size, l.Compressed); err != nil {
			return err
		}
	}
	return nil
}

func (w *tarWriter) Close() error { return w.tw.Close() }
