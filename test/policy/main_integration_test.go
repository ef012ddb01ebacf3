//go:build integration

package policy

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }
