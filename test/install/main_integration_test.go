//go:build integration

package install

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// flotillaBin is the binary the rendered Deployments run, built once for the package.
var flotillaBin string

func TestMain(m *testing.M) {
	os.Exit(testenv.MainWithFlotilla(m, testenv.Options{Spokes: 1}, &flotillaBin))
}
