//go:build integration

package procruntime_test

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/testenv"
)

// One API server (the fleet's hub, with its controller manager) serves every test here.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
