package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// built is the flotilla binary of this test process, built at most once (buildFlotilla).
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// buildFlotilla builds ./cmd/flotilla of this module into a directory of its own, once.
func buildFlotilla() (string, error) {
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "flotilla-test-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		path := filepath.Join(dir, "flotilla")
		if built.err = goBuildFlotilla(path); built.err != nil {
			return
		}
		built.path = path
	})
	return built.path, built.err
}

// goBuildFlotilla builds ./cmd/flotilla of this module into path, with env added to this
// program's environment (CGO_ENABLED=0 for a static binary an image can hold).
func goBuildFlotilla(path string, env ...string) error {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("finding the module to build flotilla from: %w", err)
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", path, "./cmd/flotilla")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building flotilla: %w\n%s", err, out)
	}
	return nil
}

// removeBuilt removes the binary buildFlotilla made, if it made one (Main, after the tests).
func removeBuilt() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

// FlotillaBinary is the path of ./cmd/flotilla of this module, built the first time a test of
// the process asks (Kueue on a hub runs its credentials plugin) and removed after the tests.
func FlotillaBinary(t testing.TB) string {
	t.Helper()
	path, err := buildFlotilla()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// BuildFlotilla builds ./cmd/flotilla of this module once and returns its path, for a TestMain
// that maps Flotilla's image to it in Options.Commands; Main removes it after the tests.
func BuildFlotilla() (string, error) { return buildFlotilla() }

// MainWithFlotilla is Main for a package whose tests run the flotilla binary: it builds
// ./cmd/flotilla of this module once, before the tests, and sets *bin to its path for them.
func MainWithFlotilla(m *testing.M, opts Options, bin *string) int {
	path, err := buildFlotilla()
	if err != nil {
		removeBuilt()
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*bin = path
	return Main(m, opts)
}
