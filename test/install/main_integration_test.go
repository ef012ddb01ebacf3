//go:build integration

package install

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// flotillaBin is the binary the rendered Deployments run, built once for the package.
var flotillaBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flotilla-install-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	flotillaBin = filepath.Join(dir, "flotilla")
	cmd := exec.Command("go", "build", "-o", flotillaBin, "./cmd/flotilla")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building flotilla: %v\n%s", err, out)
		os.Exit(1)
	}
	code := testenv.Main(m, testenv.Options{Spokes: 1})
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
