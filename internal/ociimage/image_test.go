package ociimage

import (
	"archive/tar"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// wantAnnotations are the names a platform tarball's and the index tarball's index.json give.
var wantAnnotations = map[string]string{
	"io.containerd.image.name":          "ghcr.io/flotilla/flotilla:v0.3.0-test",
	"org.opencontainers.image.ref.name": "v0.3.0-test",
}

// imageView is what a test checks of an image's config.
type imageView struct {
	MediaType       types.MediaType
	ConfigMediaType types.MediaType
	LayerMediaTypes []types.MediaType
	OS              string
	Architecture    string
	Created         time.Time
	Config          v1.Config
}

func viewImage(t *testing.T, img v1.Image) imageView {
	t.Helper()
	if err := validate.Image(img); err != nil {
		t.Fatalf("image does not validate: %v", err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	v := imageView{MediaType: m.MediaType, ConfigMediaType: m.Config.MediaType, OS: cfg.OS,
		Architecture: cfg.Architecture, Created: cfg.Created.UTC(), Config: cfg.Config}
	for _, l := range m.Layers {
		v.LayerMediaTypes = append(v.LayerMediaTypes, l.MediaType)
	}
	return v
}

func wantImage(p Platform) imageView {
	return imageView{
		MediaType:       types.OCIManifestSchema1,
		ConfigMediaType: types.OCIConfigJSON,
		LayerMediaTypes: []types.MediaType{types.OCILayer},
		OS:              p.OS,
		Architecture:    p.Architecture,
		Created:         testCreated,
		Config: v1.Config{
			User:       "65532:65532",
			Entrypoint: []string{"/flotilla"},
			WorkingDir: "/",
			Labels: map[string]string{
				"org.opencontainers.image.title":    "flotilla",
				"org.opencontainers.image.version":  "v0.3.0-test",
				"org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567",
				"org.opencontainers.image.source":   "https://github.com/flotilla/flotilla",
				"org.opencontainers.image.created":  "2026-12-02T07:14:46Z",
			},
		},
	}
}

func wantLayer(binary []byte) []tarEntry {
	return []tarEntry{
		{Name: "etc/", Type: tar.TypeDir, Mode: 0o755, ModTime: testCreated},
		{Name: "etc/group", Type: tar.TypeReg, Mode: 0o644, ModTime: testCreated, Body: "root:x:0:\nnonroot:x:65532:\n"},
		{Name: "etc/passwd", Type: tar.TypeReg, Mode: 0o644, ModTime: testCreated,
			Body: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n"},
		{Name: "flotilla", Type: tar.TypeReg, Mode: 0o755, ModTime: testCreated, Body: string(binary)},
		{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777, ModTime: testCreated},
	}
}

func layerEntries(t *testing.T, img v1.Image) []tarEntry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	return readTar(t, rc)
}

func TestPlatformTarballIsOCILayout(t *testing.T) {
	spec, bins := testSpec(t, t.TempDir())
	im, arts := buildAndWrite(t, spec)
	for i, p := range []Platform{amd64, arm64} {
		t.Run(p.String(), func(t *testing.T) {
			a := artifactFor(t, arts, p.String())
			wantPath := filepath.Join(filepath.Dir(a.Path), "flotilla-linux-"+p.Architecture+".tar")
			if a.Path != wantPath {
				t.Errorf("tarball at %s, want %s", a.Path, wantPath)
			}
			idx, err := layout.ImageIndexFromPath(untar(t, a.Path))
			if err != nil {
				t.Fatalf("reading %s as an OCI layout: %v", a.Path, err)
			}
			size, err := im.Platforms[i].Image.Size()
			if err != nil {
				t.Fatal(err)
			}
			gotIndex, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			wantIndex := &v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{{
				MediaType: types.OCIManifestSchema1, Digest: a.Digest, Size: size,
				Annotations: wantAnnotations, Platform: &v1.Platform{OS: "linux", Architecture: p.Architecture},
			}}}
			if diff := cmp.Diff(wantIndex, gotIndex); diff != "" {
				t.Errorf("index.json (-want +got):\n%s", diff)
			}
			img, err := idx.Image(a.Digest)
			if err != nil {
				t.Fatalf("image %s from the layout: %v", a.Digest, err)
			}
			if diff := cmp.Diff(wantImage(p), viewImage(t, img)); diff != "" {
				t.Errorf("image (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantLayer(bins[p]), layerEntries(t, img)); diff != "" {
				t.Errorf("layer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlatformTarballIsDockerArchive(t *testing.T) {
	spec, bins := testSpec(t, t.TempDir())
	im, arts := buildAndWrite(t, spec)
	tag, err := name.NewTag(testRef)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []Platform{amd64, arm64} {
		t.Run(p.String(), func(t *testing.T) {
			a := artifactFor(t, arts, p.String())
			img, err := tarball.ImageFromPath(a.Path, &tag)
			if err != nil {
				t.Fatalf("reading %s as a docker-save archive by its tag: %v", a.Path, err)
			}
			// tarball.Image reports Docker media types whatever the archive holds, as docker load does.
			want := wantImage(p)
			want.MediaType, want.ConfigMediaType = types.DockerManifestSchema2, types.DockerConfigJSON
			want.LayerMediaTypes = []types.MediaType{types.DockerLayer}
			if diff := cmp.Diff(want, viewImage(t, img)); diff != "" {
				t.Errorf("image (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantLayer(bins[p]), layerEntries(t, img)); diff != "" {
				t.Errorf("layer (-want +got):\n%s", diff)
			}

			// The docker manifest points at the OCI layout's own blobs, and the archive holds
			// nothing else.
			built := im.Platforms[i].Image
			cfg, _ := built.ConfigName()
			m, _ := built.Manifest()
			wantDocker := tarball.Manifest{{
				Config:   "blobs/sha256/" + cfg.Hex,
				RepoTags: []string{"ghcr.io/flotilla/flotilla:v0.3.0-test"},
				Layers:   []string{"blobs/sha256/" + m.Layers[0].Digest.Hex},
			}}
			dir := untar(t, a.Path)
			raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var gotDocker tarball.Manifest
			if err := json.Unmarshal(raw, &gotDocker); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantDocker, gotDocker); diff != "" {
				t.Errorf("manifest.json (-want +got):\n%s", diff)
			}
			wantNames := []string{"oci-layout", "index.json", "manifest.json", "blobs/", "blobs/sha256/",
				"blobs/sha256/" + a.Digest.Hex, wantDocker[0].Config, wantDocker[0].Layers[0]}
			if diff := cmp.Diff(wantNames, tarNames(t, a.Path)); diff != "" {
				t.Errorf("archive members (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIndexTarballListsEveryPlatform(t *testing.T) {
	spec, _ := testSpec(t, t.TempDir())
	im, arts := buildAndWrite(t, spec)
	a := artifactFor(t, arts, IndexPlatform)
	if want := filepath.Join(filepath.Dir(a.Path), "flotilla.tar"); a.Path != want {
		t.Errorf("index tarball at %s, want %s", a.Path, want)
	}
	top, err := layout.ImageIndexFromPath(untar(t, a.Path))
	if err != nil {
		t.Fatalf("reading %s as an OCI layout: %v", a.Path, err)
	}
	size := im.Index.Size
	gotTop, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	wantTop := &v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{{
		MediaType: types.OCIImageIndex, Digest: a.Digest, Size: size, Annotations: wantAnnotations,
	}}}
	if diff := cmp.Diff(wantTop, gotTop); diff != "" {
		t.Errorf("index.json (-want +got):\n%s", diff)
	}

	idx, err := top.ImageIndex(a.Digest)
	if err != nil {
		t.Fatalf("image index %s from the layout: %v", a.Digest, err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("index does not validate: %v", err)
	}
	got, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var want []v1.Descriptor
	for i, p := range []Platform{amd64, arm64} {
		size, err := im.Platforms[i].Image.Size()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: size,
			Digest: artifactFor(t, arts, p.String()).Digest, Platform: &v1.Platform{OS: p.OS, Architecture: p.Architecture}})
	}
	if diff := cmp.Diff(want, got.Manifests); diff != "" {
		t.Errorf("index entries (-want +got):\n%s", diff)
	}
	for _, e := range want {
		img, err := idx.Image(e.Digest)
		if err != nil {
			t.Fatalf("%s image from the index: %v", e.Platform, err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.OS + "/" + cfg.Architecture; got != e.Platform.String() {
			t.Errorf("index entry %s holds an image for %s", e.Platform, got)
		}
	}
}

func TestArtifactSizes(t *testing.T) {
	spec, bins := testSpec(t, t.TempDir())
	im, arts := buildAndWrite(t, spec)
	var sumCompressed, sumUncompressed int64
	for i, p := range []Platform{amd64, arm64} {
		a := artifactFor(t, arts, p.String())
		info, err := os.Stat(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		layers, _ := im.Platforms[i].Image.Layers()
		rc, _ := layers[0].Uncompressed()
		unpacked := readTar(t, rc)
		_ = rc.Close()
		// A tar of these members is at least their bodies plus a 512-byte header each.
		minUncompressed := int64(len(bins[p]))
		for _, e := range unpacked {
			minUncompressed += 512
			if e.Name != "flotilla" {
				minUncompressed += int64(len(e.Body))
			}
		}
		if a.FileSize != info.Size() || a.UncompressedSize < minUncompressed || a.CompressedSize <= 0 || a.CompressedSize >= a.FileSize {
			t.Errorf("%s: file %d (on disk %d), compressed %d, uncompressed %d (at least %d)",
				p, a.FileSize, info.Size(), a.CompressedSize, a.UncompressedSize, minUncompressed)
		}
		sumCompressed += a.CompressedSize
		sumUncompressed += a.UncompressedSize
	}
	idx := artifactFor(t, arts, IndexPlatform)
	indexSize := im.Index.Size
	if diff := cmp.Diff([]int64{sumCompressed + indexSize, sumUncompressed}, []int64{idx.CompressedSize, idx.UncompressedSize}); diff != "" {
		t.Errorf("index sizes are the platforms' sums (-want +got):\n%s", diff)
	}
}
