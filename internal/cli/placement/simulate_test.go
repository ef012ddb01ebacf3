package placement

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flotilla/flotilla/internal/cli/streams"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// now is the fake clock's time: the conditions' lastTransitionTime.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// runSimulate runs `flotilla placement simulate args...` mounted under a root as root.go mounts it.
func runSimulate(args ...string) (stdout string, err error) {
	io, out, _ := streams.Buffers()
	root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.AddCommand(NewCommand(io, clocktesting.NewFakePassiveClock(now)))
	root.SetArgs(append([]string{"placement", "simulate"}, args...))
	err = root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestSimulateGolden(t *testing.T) {
	const examples = "../../../examples/placement/"
	cases := map[string]struct {
		fleet, placements string
	}{
		// Additive default (Steady and Balance) fed by the fleet's PlacementDecisions.
		"web": {fleet: "testdata/fleet.yaml", placements: "testdata/web.yaml"},
		// A label selector and numberOfClusters with an AddOn score, then a grouped placement.
		"east": {fleet: "testdata/fleet.yaml", placements: "testdata/east.yaml"},
		// numberOfClusters 0: no decisions, and NoManagedClusterMatched as OCM.
		"zero": {fleet: "testdata/fleet.yaml", placements: "testdata/zero.yaml"},
		// An unknown built-in prioritizer: no decisions, the condition names the field.
		"misconfigured": {fleet: "testdata/fleet.yaml", placements: "testdata/misconfigured.yaml"},
		// The examples docs/placement.md shows.
		"example-training":     {fleet: examples + "fleet.yaml", placements: examples + "training.yaml"},
		"example-gpu-capacity": {fleet: examples + "fleet.yaml", placements: examples + "gpu-score.yaml"},
	}
	for name, tc := range cases {
		for _, format := range []string{"json", "table"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				got, err := runSimulate("--fleet", tc.fleet, "-f", tc.placements, "-o", format)
				if err != nil {
					t.Fatalf("simulate: %v", err)
				}
				ext := map[string]string{"json": ".json", "table": ".txt"}[format]
				golden := filepath.Join("testdata", "golden", name+ext)
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/cli/placement/ -update to write it)", err)
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("simulate -o %s (-want +got):\n%s", format, diff)
				}
			})
		}
	}
}

func TestSimulateErrors(t *testing.T) {
	cases := map[string]struct {
		args []string
		// wantErr are substrings the error must hold.
		wantErr []string
	}{
		"unknown kind": {
			args:    []string{"--fleet", "testdata/bad-kind.yaml", "-f", "testdata/web.yaml"},
			wantErr: []string{"--fleet: testdata/bad-kind.yaml: document 3 (line 9)", `unknown kind: apiVersion "cluster.open-cluster-management.io/v1" kind "ManagedClusterz"`},
		},
		"known kind not used": {
			args:    []string{"--fleet", "testdata/bad-deployment.yaml", "-f", "testdata/web.yaml"},
			wantErr: []string{"testdata/bad-deployment.yaml: document 1 (line 1)", `not used to schedule placements: apiVersion "apps/v1" kind "Deployment"`},
		},
		"malformed YAML": {
			args:    []string{"--fleet", "testdata/bad-yaml.yaml", "-f", "testdata/web.yaml"},
			wantErr: []string{"testdata/bad-yaml.yaml: document 2 (line 5): malformed YAML"},
		},
		"unknown field": {
			args:    []string{"--fleet", "testdata/bad-field.yaml", "-f", "testdata/web.yaml"},
			wantErr: []string{"testdata/bad-field.yaml: document 1 (line 1): ManagedClusterSet:", `unknown field "spec.clusterSelector.selectorTyp"`},
		},
		"unquoted y": {
			args:    []string{"--fleet", "testdata/bad-bool.yaml", "-f", "testdata/web.yaml"},
			wantErr: []string{"document 1 (line 1): ManagedCluster:", "metadata.name", `quote the value, "y"`},
		},
		"missing file": {
			args:    []string{"--fleet", "testdata/no-such-fleet.yaml", "-f", "testdata/web.yaml"},
			wantErr: []string{"--fleet: reading open testdata/no-such-fleet.yaml: no such file or directory"},
		},
		"no placement": {
			args:    []string{"--fleet", "testdata/fleet.yaml", "-f", "testdata/no-placement.yaml"},
			wantErr: []string{"-f testdata/no-placement.yaml holds no Placement"},
		},
		"fleet objects in -f": {
			args:    []string{"--fleet", "testdata/fleet.yaml", "-f", "testdata/fleet.yaml"},
			wantErr: []string{"-f testdata/fleet.yaml holds", "not Placements: move them to the --fleet file"},
		},
		"bad output": {
			args:    []string{"--fleet", "testdata/fleet.yaml", "-f", "testdata/web.yaml", "-o", "yaml"},
			wantErr: []string{`--output (-o) "yaml" is not supported`},
		},
		"no fleet flag": {
			args:    []string{"-f", "testdata/web.yaml"},
			wantErr: []string{`required flag(s) "fleet" not set`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := runSimulate(tc.args...)
			if err == nil {
				t.Fatalf("simulate succeeded, want an error; printed:\n%s", out)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not hold %q", err, want)
				}
			}
		})
	}
}
