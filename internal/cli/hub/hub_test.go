package hub

import (
	"k8s.io/utils/clock"
	"testing"

	"github.com/flotilla/flotilla/internal/cli/streams"
)

// The SIG PlacementDecision mirror writes objects consumers may act on: it stays off unless asked.
func TestSIGPlacementDecisionsFlagOffByDefault(t *testing.T) {
	io, _, _ := streams.Buffers()
	f := NewCommand(io, clock.RealClock{}).Flags().Lookup("sig-placement-decisions")
	if f == nil {
		t.Fatal("flotilla hub has no --sig-placement-decisions flag")
	}
	if f.DefValue != "false" {
		t.Errorf("--sig-placement-decisions defaults to %s, want false", f.DefValue)
	}
}

// Go's profiles show what is in the hub's memory: /debug/pprof is served only when asked for.
func TestPprofOffByDefault(t *testing.T) {
	io, _, _ := streams.Buffers()
	f := NewCommand(io, clock.RealClock{}).Flags().Lookup("pprof-bind-address")
	if f == nil {
		t.Fatal("flotilla hub has no --pprof-bind-address flag")
	}
	if f.DefValue != "" {
		t.Errorf("--pprof-bind-address defaults to %q, want empty (off)", f.DefValue)
	}
}
