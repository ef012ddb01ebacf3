package ociimage

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParsePlatform(t *testing.T) {
	cases := map[string]struct {
		want    Platform
		wantErr string
	}{
		"linux/amd64":   {want: amd64},
		"linux/arm64":   {want: arm64},
		"linux/ppc":     {wantErr: `platform "linux/ppc": not one images are built for; use one of linux/amd64, linux/arm64`},
		"windows/amd64": {wantErr: `platform "windows/amd64": not one images are built for`},
		"amd64":         {wantErr: `platform "amd64": not one images are built for`},
		"linux/amd64/":  {wantErr: `platform "linux/amd64/": not one images are built for`},
	}
	for in, tc := range cases {
		t.Run(in, func(t *testing.T) {
			got, err := ParsePlatform(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("platform (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	dynamic := writeTestFile(t, dir, "cgo/flotilla", fakeELF(t, elf.EM_X86_64, "/lib64/ld-linux-x86-64.so.2", "uses libc"))
	wrongArch := writeTestFile(t, dir, "amd64-built/flotilla", fakeELF(t, elf.EM_X86_64, "", "amd64"))
	script := writeTestFile(t, dir, "script/flotilla", []byte("#!/bin/sh\necho flotilla\n"))
	missing := filepath.Join(dir, "never-built", "flotilla")

	cases := map[string]struct {
		change func(*Spec)
		// wantErr are parts of the error: what is wrong, which file, and the fix.
		wantErr []string
	}{
		"missing binary": {
			change:  func(s *Spec) { s.Binaries[0].Path = missing },
			wantErr: []string{"binary for linux/amd64", missing, "does not exist", "CGO_ENABLED=0 GOOS=linux GOARCH=amd64"},
		},
		"dynamically linked binary": {
			change: func(s *Spec) { s.Binaries[0].Path = dynamic },
			wantErr: []string{"binary for linux/amd64", dynamic, "is dynamically linked",
				"/lib64/ld-linux-x86-64.so.2", "CGO_ENABLED=0"},
		},
		"binary for another architecture": {
			change:  func(s *Spec) { s.Binaries[1].Path = wrongArch },
			wantErr: []string{"binary for linux/arm64", wrongArch, "EM_X86_64", "not EM_AARCH64", "GOARCH=arm64"},
		},
		"not an ELF file": {
			change:  func(s *Spec) { s.Binaries[0].Path = script },
			wantErr: []string{"binary for linux/amd64", script, "is not an ELF executable", "CGO_ENABLED=0"},
		},
		"unknown platform": {
			change:  func(s *Spec) { s.Binaries[1].Platform = Platform{OS: "linux", Architecture: "ppc"} },
			wantErr: []string{"platform linux/ppc is not one images are built for", "linux/amd64, linux/arm64"},
		},
		"two binaries for one platform": {
			change:  func(s *Spec) { s.Binaries[1].Platform = amd64 },
			wantErr: []string{"platform linux/amd64 has two binaries"},
		},
		"no binaries": {
			change:  func(s *Spec) { s.Binaries = nil },
			wantErr: []string{"no binaries", "linux/amd64=bin/linux-amd64/flotilla"},
		},
		"reference without a tag": {
			change:  func(s *Spec) { s.Ref = "ghcr.io/flotilla/flotilla" },
			wantErr: []string{`image reference "ghcr.io/flotilla/flotilla"`, "ghcr.io/flotilla/flotilla:v0.3.0"},
		},
		"reference without a registry": {
			change:  func(s *Spec) { s.Ref = "flotilla:v1" },
			wantErr: []string{`image reference "flotilla:v1"`},
		},
		"no version, commit or time": {
			change:  func(s *Spec) { s.Version, s.Commit, s.Created = "", "", time.Time{} },
			wantErr: []string{"version is empty", "commit is empty", "created is not set", "git log -1 --format=%cI"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec, _ := testSpec(t, t.TempDir())
			tc.change(&spec)
			_, err := Build(spec)
			if err == nil {
				t.Fatal("Build accepted it")
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not say %q", err, part)
				}
			}
		})
	}
}

// TestRealBinaries checks the ELF check on binaries the Go toolchain builds, not only on fakes: a
// static build for arm64 is accepted for linux/arm64 and refused for linux/amd64.
func TestRealBinaries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if _, err := checkBinary(bin, arm64); err != nil {
		t.Errorf("a static Go build for arm64 is refused for linux/arm64: %v", err)
	}
	if _, err := checkBinary(bin, amd64); err == nil || !strings.Contains(err.Error(), "EM_AARCH64") {
		t.Errorf("a Go build for arm64 given for linux/amd64: error %v, want one naming EM_AARCH64", err)
	}
}
