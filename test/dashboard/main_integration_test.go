//go:build integration

package dashboard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// flotillaBin is the binary under test, built once for the package with the dashboard's assets.
var flotillaBin string

// webDir is the web app's directory.
var webDir = filepath.Join("..", "..", "web", "dashboard")

func TestMain(m *testing.M) {
	if _, err := os.Stat(filepath.Join(webDir, "dist", "index.html")); err != nil {
		fmt.Fprintf(os.Stderr, "the dashboard's web assets are not built (%v): run make dashboard-assets (npm ci && npm run build in web/dashboard) first\n", err)
		os.Exit(1)
	}
	os.Exit(testenv.MainWithFlotilla(m, testenv.Options{CRDs: true}, &flotillaBin))
}
