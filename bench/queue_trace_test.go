package bench

// The fleet and trace of `make bench-queue`, which `make bench-queue-sim` also simulates: not
// build-tagged, so that both see them.

import "github.com/flotilla/flotilla/internal/core/queuesim"

const (
	// qSeed is the trace's seed: both phases replay the same trace.
	qSeed = 1
	// qMaxDuration caps a job's run time in the trace (seconds before compression), so that the
	// replay's tail stays within minutes.
	qMaxDuration = 1200
	// qMinDuration is the shortest run time (seconds before compression).
	qMinDuration = 40
)

// qWorkers is the fleet: three GPU workers shaped like the local fleet's (gpu-east, gpu-west,
// edge-1), two nodes each. The worker names sort in MultiKueue's config order.
var qWorkers = queuesim.Fleet{
	{Name: "w1-h100", Model: queuesim.H100, Nodes: 2},
	{Name: "w2-a100", Model: queuesim.A100, Nodes: 2},
	{Name: "w3-t4", Model: queuesim.T4, Nodes: 2},
}

// qTrace is the benchmark's trace of n jobs: internal/core/queuesim's default shapes, run times
// within [qMinDuration, qMaxDuration].
func qTrace(n int, seed uint64) queuesim.TraceConfig {
	tc := queuesim.DefaultTrace(n, seed)
	tc.MaxDuration, tc.MinDuration = qMaxDuration, qMinDuration
	return tc
}
