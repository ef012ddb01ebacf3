package hub

import (
	"testing"

	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/streams"
)

// Flags that turn on what a user must ask for stay off by default: the SIG PlacementDecision
// mirror writes objects consumers may act on, and Go's profiles show what is in the hub's memory.
func TestFlagsOffByDefault(t *testing.T) {
	cases := map[string]string{"sig-placement-decisions": "false", "pprof-bind-address": ""}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			io, _, _ := streams.Buffers()
			f := NewCommand(io, clock.RealClock{}).Flags().Lookup(name)
			if f == nil {
				t.Fatalf("flotilla hub has no --%s flag", name)
			}
			if f.DefValue != want {
				t.Errorf("--%s defaults to %q, want %q", name, f.DefValue, want)
			}
		})
	}
}
