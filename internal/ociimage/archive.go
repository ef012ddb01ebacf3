package ociimage

import (
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	// ociLayout is the content of an OCI image layout's oci-layout file.
	ociLayout = `{"imageLayoutVersion":"1.0.0"}`
	// annotationImageName is where containerd (ctr import, kind, Docker's containerd store) reads an
	// image's full name from; org.opencontainers.image.ref.name holds only the tag, as in `docker save`.
	annotationImageName = "io.containerd.image.name"
	annotationRefName   = "org.opencontainers.image.ref.name"
)

// FullName is ref as containerd and Docker store it: registry, repository and tag, with Docker
// Hub spelled docker.io.
func FullName(ref name.Tag) string {
	reg := ref.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + ref.RepositoryStr() + ":" + ref.TagStr()
}

func refAnnotations(ref name.Tag) map[string]string {
	return map[string]string{annotationImageName: FullName(ref), annotationRefName: ref.TagStr()}
}

// writeImageArchive writes one platform's image as an OCI image layout that is also a docker-save
// archive: index.json and manifest.json both point at the same blobs.
func writeImageArchive(out io.Writer, ref name.Tag, pi PlatformImage, mtime time.Time) error {
	w := newTarWriter(out, mtime)
	if err := w.file("oci-layout", []byte(ociLayout)); err != nil {
		return err
	}
	desc, err := imageDescriptor(pi.Image, pi.Platform, refAnnotations(ref))
	if err != nil {
		return err
	}
	index, err := newIndex(desc)
	if err != nil {
		return err
	}
	if err := w.file("index.json", index.Raw); err != nil {
		return err
	}
	docker, err := dockerManifest(ref, pi.Image)
	if err != nil {
		return err
	}
	if err := w.json("manifest.json", docker); err != nil {
		return err
	}
	if err := w.image(pi.Image); err != nil {
		return err
	}
	return w.Close()
}

// dockerManifest is the manifest.json `docker save` writes and `docker load` reads: the config and
// the layers by path inside the archive, and the name to tag the image with.
func dockerManifest(ref name.Tag, img v1.Image) (tarball.Manifest, error) {
	cfg, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	d := tarball.Descriptor{Config: blobPath(cfg), RepoTags: []string{FullName(ref)}}
	for _, l := range m.Layers {
		d.Layers = append(d.Layers, blobPath(l.Digest))
	}
	return tarball.Manifest{d}, nil
}

// writeIndexArchive writes the image index over every platform as an OCI image layout whose
// index.json names that one index, as BuildKit's OCI exporter does for multi-platform builds.
func writeIndexArchive(out io.Writer, im *Images) error {
	w := newTarWriter(out, im.Created)
	if err := w.file("oci-layout", []byte(ociLayout)); err != nil {
		return err
	}
	top, err := newIndex(im.Index.descriptor(refAnnotations(im.Ref)))
	if err != nil {
		return err
	}
	if err := w.file("index.json", top.Raw); err != nil {
		return err
	}
	for _, pi := range im.Platforms {
		if err := w.image(pi.Image); err != nil {
			return err
		}
	}
	if _, err := w.rawBlob(im.Index.Raw); err != nil {
		return err
	}
	return w.Close()
}
