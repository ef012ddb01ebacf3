//go:build integration

package chaos

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// Each cluster has its own etcd, so that a test can restart the hub's alone.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true, EtcdPerCluster: true}))
}
