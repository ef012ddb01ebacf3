package ociimage

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestBuildIsReproducible builds twice from copies of the same binaries in other folders: the
// digests and the tarballs' bytes are equal. Each change to an input changes every digest it
// feeds, so the equality is not that of an output that ignores its inputs.
func TestBuildIsReproducible(t *testing.T) {
	base, _ := testSpec(t, t.TempDir())
	_, baseArts := buildAndWrite(t, base)

	cases := map[string]struct {
		change func(t *testing.T, s *Spec)
		// wantSame lists the artifacts (by platform) whose digest and bytes stay the same.
		wantSame []string
	}{
		"same inputs, binaries elsewhere": {
			change:   func(t *testing.T, s *Spec) { *s, _ = testSpec(t, t.TempDir()) },
			wantSame: []string{"linux/amd64", "linux/arm64", IndexPlatform},
		},
		"a later commit time": {
			change: func(_ *testing.T, s *Spec) { s.Created = s.Created.Add(time.Second) },
		},
		"another commit": {
			change: func(_ *testing.T, s *Spec) { s.Commit = "fedcba9876543210fedcba9876543210fedcba98" },
		},
		"another arm64 binary": {
			change: func(t *testing.T, s *Spec) {
				s.Binaries[1].Path = writeTestFile(t, t.TempDir(), "flotilla", fakeELF(t, elf.EM_AARCH64, "", "flotilla v2"))
			},
			wantSame: []string{"linux/amd64"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := base
			spec.Binaries = append([]Binary(nil), base.Binaries...)
			tc.change(t, &spec)
			_, arts := buildAndWrite(t, spec)

			type fingerprint struct {
				Digest v1.Hash
				SHA256 string
			}
			want, got := map[string]bool{}, map[string]bool{}
			for _, p := range tc.wantSame {
				want[p] = true
			}
			for _, a := range baseArts {
				b := artifactFor(t, arts, a.Platform)
				same := fingerprint{a.Digest, fileSHA256(t, a.Path)} == fingerprint{b.Digest, fileSHA256(t, b.Path)}
				if same {
					got[a.Platform] = true
				}
				if a.Digest == b.Digest && !same {
					t.Errorf("%s: equal digests %s but different tarball bytes", a.Platform, a.Digest)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("artifacts that stay the same (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteReplacesTarballs rewrites into a folder that holds an older build and leaves no
// temporary files behind.
func TestWriteReplacesTarballs(t *testing.T) {
	spec, _ := testSpec(t, t.TempDir())
	im, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flotilla-linux-amd64.tar"), []byte("an older build"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := im.Write(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"flotilla-linux-amd64.tar", "flotilla-linux-arm64.tar", "flotilla.tar"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if got := tarNames(t, filepath.Join(dir, "flotilla-linux-amd64.tar")); len(got) == 0 || got[0] != "oci-layout" {
		t.Errorf("flotilla-linux-amd64.tar was not replaced: members %v", got)
	}
}
