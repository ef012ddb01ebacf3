//go:build integration

package flowerfleet

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
	"github.com/flotilla/flotilla/internal/version"
)

// AppImage is the example app's image; the runtime runs flower-superexec for it (the image's
// entry point), as for OCM's flower-app images.
const AppImage = "ghcr.io/flotilla/federated-learning-example:1.0.0"

// venv is the Python environment with Flower (hack/flwr/venv.sh).
var venv string

func TestMain(m *testing.M) {
	out, err := exec.Command("../../hack/flwr/venv.sh").Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "flowerfleet: building Flower's venv with hack/flwr/venv.sh: %v\n", err)
		os.Exit(1)
	}
	venv = strings.TrimSpace(string(bytes.TrimSpace(out)))
	bin := filepath.Join(venv, "bin")
	// flower-superexec starts flwr-serverapp and flwr-clientapp by name from PATH.
	_ = os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Each federation's own SuperLink has a front, `flotilla flower-front`, from Flotilla's image.
	flotilla, err := testenv.BuildFlotilla()
	if err != nil {
		fmt.Fprintf(os.Stderr, "flowerfleet: %v\n", err)
		os.Exit(1)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Spokes: 4, CRDs: true, HubRuntime: true, SpokeRuntime: true, RuntimeAddresses: true,
		Commands: map[string]string{
			"flwr/superlink":          filepath.Join(bin, "flower-superlink"),
			"flwr/supernode":          filepath.Join(bin, "flower-supernode"),
			AppImage:                  filepath.Join(bin, "flower-superexec"),
			version.DefaultRepository: flotilla,
		},
		// An image of Flower would set these; they keep Flower from calling flower.ai.
		RuntimeEnv: map[string]string{"FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1"},
	}))
}
