package localk8s

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The API server serves /debug/pprof only when a benchmark asks for it (ClusterOptions.Profiling).
func TestAPIServerProfiling(t *testing.T) {
	cases := map[string]struct {
		profiling bool
		want      string
	}{
		"off by default": {profiling: false, want: "--profiling=false"},
		"asked for":      {profiling: true, want: "--profiling=true"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := apiServerArgs(ClusterOptions{Name: "hub", Dir: "/d", EtcdURL: "http://127.0.0.1:2379", Profiling: tc.profiling}, 6443)
			var got []string
			for _, a := range args {
				if strings.HasPrefix(a, "--profiling=") {
					got = append(got, a)
				}
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("profiling flags (-want +got):\n%s", diff)
			}
			if !slices.Contains(args, "--etcd-prefix=/hub") {
				t.Errorf("args %v lack the cluster's etcd prefix", args)
			}
		})
	}
}
