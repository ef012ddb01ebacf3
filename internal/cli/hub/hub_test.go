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
