//go:build integration

package governance

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 1, CRDs: true})) }
