package gpufit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse feeds the placement.flotilla.io/gpu annotation parser arbitrary values, as any
// Placement author may write them. It must never panic, and whatever it accepts must print back
// (String) to a value that parses to the same requirement.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"model=NVIDIA-H100-80GB-HBM3,perNode=8,nodes=4",
		"total=32",
		"resource=amd.com/gpu,perNode=2",
		"nodes=3",
		"perNode=1.5,total=100Mi",
		"model=,perNode=8",
		"perNode=-1",
		"nodes=99999999999999",
		" , ",
		"total=1e1000",
		"perNode=8,perNode=8",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		req, err := Parse(value)
		if err != nil {
			return
		}
		again, err := Parse(req.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %+v, whose String %q does not parse: %v", value, req, req.String(), err)
		}
		if diff := cmp.Diff(req.String(), again.String()); diff != "" {
			t.Fatalf("Parse(%q) does not round-trip through String (-first +second):\n%s", value, diff)
		}
	})
}
