// Command image builds Flotilla's container images from static flotilla binaries, with no
// container engine and no registry: one OCI image layout tarball per platform (which docker load,
// ctr import and kind load image-archive also accept) and one multi-arch tarball holding the
// image index. `make image` cross-builds the binaries and runs it:
//
//	go run ./hack/image --ref ghcr.io/flotilla/flotilla:v0.3.0 --version v0.3.0 \
//	  --commit "$(git rev-parse HEAD)" --created "$(git log -1 --format=%cI)" \
//	  --binary linux/amd64=bin/linux-amd64/flotilla --binary linux/arm64=bin/linux-arm64/flotilla \
//	  --out bin/images
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/flotilla/flotilla/internal/ociimage"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, time.Now); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// run builds and writes the images; now only times the build for the report.
func run(args []string, out io.Writer, now func() time.Time) error {
	fs := pflag.NewFlagSet("image", pflag.ContinueOnError)
	var (
		spec     ociimage.Spec
		binaries []string
		created  string
		dir      string
	)
	fs.StringVar(&spec.Ref, "ref", "", "image reference with registry and tag, such as ghcr.io/flotilla/flotilla:v0.3.0")
	fs.StringVar(&spec.Version, "version", "", "the binaries' version (git describe), for the label org.opencontainers.image.version")
	fs.StringVar(&spec.Commit, "commit", "", "the binaries' commit (git rev-parse HEAD), for the label org.opencontainers.image.revision")
	fs.StringVar(&spec.Source, "source", ociimage.DefaultSource, "the label org.opencontainers.image.source")
	fs.StringVar(&created, "created", "", "RFC 3339 time every timestamp in the images takes: the commit time (git log -1 --format=%cI)")
	fs.StringArrayVar(&binaries, "binary", nil, "PLATFORM=PATH of a static flotilla binary, such as linux/arm64=bin/linux-arm64/flotilla; once per platform")
	fs.StringVar(&dir, "out", "bin/images", "folder to write the tarballs into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; every input is a flag (--help lists them)", fs.Args())
	}
	if created != "" {
		t, err := time.Parse(time.RFC3339, created)
		if err != nil {
			return fmt.Errorf("--created %q: not an RFC 3339 time; pass the commit time, git log -1 --format=%%cI", created)
		}
		spec.Created = t
	}
	for _, b := range binaries {
		platform, path, ok := strings.Cut(b, "=")
		if !ok || path == "" {
			return fmt.Errorf("--binary %q: want PLATFORM=PATH, such as linux/amd64=bin/linux-amd64/flotilla", b)
		}
		p, err := ociimage.ParsePlatform(platform)
		if err != nil {
			return fmt.Errorf("--binary %q: %w", b, err)
		}
		spec.Binaries = append(spec.Binaries, ociimage.Binary{Platform: p, Path: path})
	}

	start := now()
	images, err := ociimage.Build(spec)
	if err != nil {
		return err
	}
	arts, err := images.Write(dir)
	if err != nil {
		return err
	}
	return report(out, images, arts, now().Sub(start))
}

func report(out io.Writer, images *ociimage.Images, arts []ociimage.Artifact, took time.Duration) error {
	if _, err := fmt.Fprintf(out, "%s (created %s), built in %.1fs:\n",
		ociimage.FullName(images.Ref), images.Created.Format(time.RFC3339), took.Seconds()); err != nil {
		return err
	}
	for _, a := range arts {
		if _, err := fmt.Fprintf(out, "  %-12s %s\n    %s\n    tarball %s, compressed %s, uncompressed %s\n",
			a.Platform, a.Path, a.Digest, size(a.FileSize), size(a.CompressedSize), size(a.UncompressedSize)); err != nil {
			return err
		}
	}
	return nil
}

// size is n in MiB with the exact byte count.
func size(n int64) string { return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n) }
