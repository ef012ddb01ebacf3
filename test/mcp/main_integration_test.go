//go:build integration

package mcp

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// flotillaBin is the binary under test, built once for the package.
var flotillaBin string

func TestMain(m *testing.M) {
	os.Exit(testenv.MainWithFlotilla(m, testenv.Options{CRDs: true}, &flotillaBin))
}
