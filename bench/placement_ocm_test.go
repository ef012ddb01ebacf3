//go:build integration

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla/flotilla/bench/floor"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

const (
	// ocmPlacementVersion is the release tools/build-ocm-placement.sh builds.
	ocmPlacementVersion = "v1.2.1"
	// ocmPlacementQPSEnv sets the peer's client limits as QPS/BURST ("50/100" is OCM's released
	// default); by default the peer gets the Flotilla hub's own (2000/4000), so that neither
	// side waits on its client's rate limiter and the comparison is of the controllers.
	ocmPlacementQPSEnv     = "FLOTILLA_BENCH_OCM_PLACEMENT_QPS"
	defaultOCMPlacementQPS = "2000/4000"
	// placementPeerEnv set to 0 runs Flotilla alone.
	placementPeerEnv = "FLOTILLA_BENCH_PLACEMENT_PEER"
)

// ocmPlacement says how the benchmark runs OCM's placement controller, its peer.
type ocmPlacement struct {
	bin        string // the binary; "" runs no peer
	qps, burst string
}

// describe names the peer for the record, exactly enough to run it again.
func (o ocmPlacement) describe() string {
	return fmt.Sprintf("OCM's placement controller %s (open-cluster-management.io/ocm cmd/placement, the released module unchanged, built by tools/build-ocm-placement.sh), "+
		"run as `placement controller --disable-leader-election --kube-api-qps %s --kube-api-burst %s` against the same kind of API server "+
		"(OCM's released client limits are 50 and 100; the Flotilla hub's are 2000 and 4000); its other settings are its defaults", ocmPlacementVersion, o.qps, o.burst)
}

// ocmPlacementPeer builds (or finds in the cache) OCM's placement controller. A smoke run does
// not build it (about 8 minutes cold on 2 cores): it runs the peer only when the cache has it,
// and says so in the record.
func ocmPlacementPeer(b *testing.B) ocmPlacement {
	qps, burst, ok := strings.Cut(cmpOr(os.Getenv(ocmPlacementQPSEnv), defaultOCMPlacementQPS), "/")
	if !ok {
		b.Fatalf("%s=%q: want QPS/BURST, for example 50/100", ocmPlacementQPSEnv, os.Getenv(ocmPlacementQPSEnv))
	}
	if os.Getenv(placementPeerEnv) == "0" {
		param(b, "peer", "none: "+placementPeerEnv+"=0")
		return ocmPlacement{}
	}
	args := []string{}
	if smoke() {
		args = append(args, "--print")
	}
	out, err := exec.Command("../tools/build-ocm-placement.sh", args...).Output()
	if err != nil {
		b.Fatalf("tools/build-ocm-placement.sh: %v", err)
	}
	bin := filepath.Join(strings.TrimSpace(string(out)), "placement")
	if _, err := os.Stat(bin); err != nil {
		param(b, "peer", "none: a smoke run does not build OCM's placement controller (make bench-placement does)")
		return ocmPlacement{}
	}
	return ocmPlacement{bin: bin, qps: qps, burst: burst}
}

// start runs OCM's placement controller against the API server of kubeconfig.
func (o ocmPlacement) start(b *testing.B, kubeconfig, dir string) *localk8s.Process {
	p, err := localk8s.StartProcessWith(localk8s.ProcessOptions{Name: "ocm-placement", Binary: o.bin,
		Args: []string{"controller", "--kubeconfig", kubeconfig, "--disable-leader-election", "--namespace", "open-cluster-management-hub",
			"--kube-api-qps", o.qps, "--kube-api-burst", o.burst,
			"--listen", fmt.Sprintf("127.0.0.1:%d", freePort(b))},
		LogPath: filepath.Join(dir, "ocm-placement.log")})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// placementFloorTargets are the resources a placement run writes, for the floor probe:
// Placements (created, status patched), PlacementDecisions (created, status updated; OCM's
// controller also patches them) and Events (OCM's controller records some per decision).
func placementFloorTargets() []floor.Target {
	return []floor.Target{placementTarget(), decisionTarget(), eventTarget()}
}
