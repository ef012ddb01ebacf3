package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// MainWithFlotilla is Main for a package whose tests run the flotilla binary: it builds
// ./cmd/flotilla of this module once, into a directory of its own, sets *bin to its path for
// the tests, and removes it after them.
func MainWithFlotilla(m *testing.M, opts Options, bin *string) int {
	dir, err := os.MkdirTemp("", "flotilla-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "finding the module to build flotilla from: %v\n", err)
		return 1
	}
	*bin = filepath.Join(dir, "flotilla")
	cmd := exec.Command("go", "build", "-o", *bin, "./cmd/flotilla")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building flotilla: %v\n%s", err, out)
		return 1
	}
	return Main(m, opts)
}
