package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRunRefusesBadFlags checks the errors a mistyped make variable or flag gets; the building
// itself is internal/ociimage's and tested there.
func TestRunRefusesBadFlags(t *testing.T) {
	valid := []string{"--ref", "ghcr.io/flotilla/flotilla:v1", "--version", "v1", "--commit", "abc",
		"--created", "2026-12-02T07:14:46+00:00", "--out", t.TempDir()}
	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"binary without a platform": {
			args:    slices.Concat(valid, []string{"--binary", "bin/linux-amd64/flotilla"}),
			wantErr: `--binary "bin/linux-amd64/flotilla": want PLATFORM=PATH`,
		},
		"unknown platform": {
			args:    slices.Concat(valid, []string{"--binary", "linux/ppc=bin/flotilla"}),
			wantErr: `--binary "linux/ppc=bin/flotilla": platform "linux/ppc": not one images are built for; use one of linux/amd64, linux/arm64`,
		},
		"created not RFC 3339": {
			args:    slices.Concat(valid, []string{"--created", "1764659686"}),
			wantErr: `--created "1764659686": not an RFC 3339 time`,
		},
		"stray argument": {
			args:    slices.Concat(valid, []string{"linux/amd64"}),
			wantErr: `unexpected arguments ["linux/amd64"]`,
		},
		"missing binary file": {
			args:    slices.Concat(valid, []string{"--binary", "linux/amd64=/nonexistent/flotilla"}),
			wantErr: "binary for linux/amd64: /nonexistent/flotilla does not exist",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(tc.args, &out, time.Now)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q before failing", out.String())
			}
		})
	}
}
