package agent

import (
	"k8s.io/utils/clock"
	"testing"

	"github.com/flotilla/flotilla/internal/cli/streams"
)

// The agent's client rate has flags named as Kubernetes components name theirs, with the agent's
// defaults.
func TestRateFlags(t *testing.T) {
	io, _, _ := streams.Buffers()
	flags := NewCommand(io, clock.RealClock{}).Flags()
	for name, want := range map[string]string{"kube-api-qps": "50", "kube-api-burst": "100"} {
		f := flags.Lookup(name)
		if f == nil {
			t.Errorf("flotilla agent has no --%s flag", name)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s defaults to %s, want %s", name, f.DefValue, want)
		}
		if f.Usage == "" {
			t.Errorf("--%s has no help", name)
		}
	}
}
