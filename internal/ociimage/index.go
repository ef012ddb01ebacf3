package ociimage

import (
	"bytes"
	"encoding/json"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Index is an OCI image index as written. It is encoded here rather than by
// mutate.AppendManifests, which names each image's config type in artifactType (allowed since OCI
// 1.1): tools older than that, such as skopeo 1.9, drop the field when they copy an index and so
// change its digest. Docker and BuildKit write no artifactType for images either.
type Index struct {
	Raw    []byte
	Digest v1.Hash
	Size   int64
}

func newIndex(manifests ...v1.Descriptor) (Index, error) {
	raw, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: manifests})
	if err != nil {
		return Index{}, err
	}
	digest, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return Index{}, err
	}
	return Index{Raw: raw, Digest: digest, Size: size}, nil
}

// descriptor points at the index, with annotations.
func (i Index) descriptor(annotations map[string]string) v1.Descriptor {
	return v1.Descriptor{MediaType: types.OCIImageIndex, Digest: i.Digest, Size: i.Size, Annotations: annotations}
}

// imageDescriptor points at img's manifest, for platform p, with annotations.
func imageDescriptor(img v1.Image, p Platform, annotations map[string]string) (v1.Descriptor, error) {
	mt, err := img.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := img.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: digest, Size: size, Platform: p.v1(), Annotations: annotations}, nil
}
