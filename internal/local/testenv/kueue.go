package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// KueueModule is the Go module whose CRDs InstallKueueCRDs installs, at the version go.mod pins.
const KueueModule = "sigs.k8s.io/kueue"

var kueueCRDs struct {
	once sync.Once
	err  error
}

// InstallKueueCRDs installs Kueue's CRDs (AdmissionCheck, MultiKueueConfig, MultiKueueCluster,
// ClusterQueue, …) on the hub, once per fleet, from the module go.mod pins
// (config/components/crd/bases in the module cache: no network). They stay until the fleet
// stops. Flotilla does not serve Kueue's API, so its own CRDs (Options.CRDs) leave them out.
func (e *Env) InstallKueueCRDs(t testing.TB) {
	t.Helper()
	kueueCRDs.once.Do(func() {
		crds, err := readKueueCRDs()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err = install.CRDs(ctx, e.Hub.RESTConfig(), crds, install.Options{})
		}
		kueueCRDs.err = err
	})
	if kueueCRDs.err != nil {
		t.Fatalf("installing Kueue's CRDs on the hub: %v", kueueCRDs.err)
	}
}

// readKueueCRDs reads the CRDs in the Kueue module's directory.
func readKueueCRDs() ([]*apiextv1.CustomResourceDefinition, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", KueueModule)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("finding module %s (go list -m): %w: %s", KueueModule, err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return nil, fmt.Errorf("module %s is not in the module cache: run go mod download %s", KueueModule, KueueModule)
	}
	return localk8s.ReadKueueCRDs(filepath.Join(dir, "config", "components", "crd", "bases"))
}
