package dev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla/flotilla/internal/local/realnode"
)

// dev up --real-nodes finds CoreDNS in --coredns-bin, else as realnode.FindCoreDNS does, and
// names the flag and the build script when it is not there.
func TestFindCoreDNS(t *testing.T) {
	built := t.TempDir()
	bin := filepath.Join(built, realnode.CoreDNSBin)
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		flag, env string
		want      string
		wantErr   []string
	}{
		"flag":                 {flag: built, env: t.TempDir(), want: bin},
		"flag without CoreDNS": {flag: t.TempDir(), env: built, wantErr: []string{"--coredns-bin", "tools/build-coredns.sh"}},
		"environment":          {env: built, want: bin},
		"environment without":  {env: t.TempDir(), wantErr: []string{realnode.CoreDNSBinDirEnv, "tools/build-coredns.sh"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(realnode.CoreDNSBinDirEnv, tc.env)
			got, err := findCoreDNS(tc.flag)
			if tc.wantErr == nil {
				if err != nil || got != tc.want {
					t.Errorf("findCoreDNS(%q) = %q, %v; want %q", tc.flag, got, err, tc.want)
				}
				return
			}
			for _, w := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("findCoreDNS(%q) = %q, %v; want an error naming %s", tc.flag, got, err, w)
				}
			}
		})
	}
}
