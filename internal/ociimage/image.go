package ociimage

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// DefaultSource is the label org.opencontainers.image.source when a Spec names none.
const DefaultSource = "https://github.com/flotilla/flotilla"

// Binary is a static flotilla binary and the platform it was built for.
type Binary struct {
	Platform Platform
	Path     string
}

// Spec is everything an image is made from; equal Specs over equal binaries give equal digests.
type Spec struct {
	// Ref is the full image reference with a tag, such as ghcr.io/flotilla/flotilla:v0.3.0.
	Ref string
	// Version and Commit are stamped into the labels; the binaries carry them too (make image sets both).
	Version string
	Commit  string
	// Source is the label org.opencontainers.image.source; DefaultSource when empty.
	Source string
	// Created is the time every timestamp in the output takes; the commit time, not now, so that a
	// rebuild of the same commit gives the same digests.
	Created time.Time
	// Binaries holds one binary per platform.
	Binaries []Binary
}

// Images are the built images, one per platform in the Spec's order, and the index over them.
type Images struct {
	Ref       name.Tag
	Created   time.Time
	Platforms []PlatformImage
	Index     Index
}

// PlatformImage is one platform's image.
type PlatformImage struct {
	Platform Platform
	Image    v1.Image
	// UncompressedSize is the size of the image's layer unpacked: about what it takes on a node's disk.
	UncompressedSize int64
}

// Build checks the Spec and its binaries and builds the images in memory.
func Build(spec Spec) (*Images, error) {
	ref, err := spec.validate()
	if err != nil {
		return nil, err
	}
	created := spec.Created.UTC().Truncate(time.Second)
	out := &Images{Ref: ref, Created: created}
	var manifests []v1.Descriptor
	for _, b := range spec.Binaries {
		size, err := checkBinary(b.Path, b.Platform)
		if err != nil {
			return nil, err
		}
		l, err := buildLayer(b.Path, size, created)
		if err != nil {
			return nil, err
		}
		img, err := platformImage(spec, b.Platform, l, created)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", b.Platform, err)
		}
		out.Platforms = append(out.Platforms, PlatformImage{Platform: b.Platform, Image: img, UncompressedSize: l.uncompressedSize})
		desc, err := imageDescriptor(img, b.Platform, nil)
		if err != nil {
			return nil, err
		}
		manifests = append(manifests, desc)
	}
	if out.Index, err = newIndex(manifests...); err != nil {
		return nil, err
	}
	return out, nil
}

func (s Spec) validate() (name.Tag, error) {
	ref, err := name.NewTag(s.Ref, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference %q: %w; give registry, repository and tag, such as ghcr.io/flotilla/flotilla:v0.3.0", s.Ref, err)
	}
	var problems []string
	if s.Version == "" {
		problems = append(problems, "version is empty; pass the binaries' version (git describe)")
	}
	if s.Commit == "" {
		problems = append(problems, "commit is empty; pass the binaries' commit (git rev-parse HEAD)")
	}
	if s.Created.IsZero() {
		problems = append(problems, "created is not set; pass the commit time (git log -1 --format=%cI) so rebuilds give the same digest")
	}
	if len(s.Binaries) == 0 {
		problems = append(problems, "no binaries; give one per platform, such as linux/amd64=bin/linux-amd64/flotilla")
	}
	seen := map[Platform]string{}
	for _, b := range s.Binaries {
		if _, ok := machines[b.Platform]; !ok {
			problems = append(problems, fmt.Sprintf("binary %s: platform %s is not one images are built for; use one of %s",
				b.Path, b.Platform, strings.Join(SupportedPlatforms(), ", ")))
		}
		if prev, dup := seen[b.Platform]; dup {
			problems = append(problems, fmt.Sprintf("platform %s has two binaries, %s and %s; give one", b.Platform, prev, b.Path))
		}
		seen[b.Platform] = b.Path
	}
	if len(problems) > 0 {
		return name.Tag{}, fmt.Errorf("image %s: %s", s.Ref, strings.Join(problems, "; "))
	}
	return ref, nil
}

// platformImage is the empty image plus l, with a config that runs /flotilla as nonroot.
func platformImage(spec Spec, p Platform, l *layer, created time.Time) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{
		Layer: l,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "flotilla " + spec.Version + " (" + p.String() + ") at " + BinaryPath + ", with /etc/passwd, /etc/group and /tmp",
			Comment:   "built by hack/image (internal/ociimage)",
		},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = p.OS, p.Architecture
	cfg.Created = v1.Time{Time: created}
	cfg.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", NonrootID, NonrootID),
		Entrypoint: []string{BinaryPath},
		WorkingDir: "/",
		Labels:     labels(spec, created),
	}
	return mutate.ConfigFile(img, cfg)
}

// labels are the OCI annotations' standard keys, as image config labels.
func labels(spec Spec, created time.Time) map[string]string {
	source := spec.Source
	if source == "" {
		source = DefaultSource
	}
	return map[string]string{
		"org.opencontainers.image.title":    "flotilla",
		"org.opencontainers.image.version":  spec.Version,
		"org.opencontainers.image.revision": spec.Commit,
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
	}
}
