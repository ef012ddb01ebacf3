//go:build integration

package chaos

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true})) }
