//go:build integration

package procruntime_test

import (
	"os"
	"testing"

	"github.com/flotilla/flotilla/internal/local/procruntime"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// One API server (the fleet's hub, with its controller manager, kube-scheduler and a
// process-runtime node whose shell pods run as processes) serves every test here.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		HubRuntime: true,
		Commands:   map[string]string{procruntime.Repository(shellImage): "/bin/sh"},
	}))
}
