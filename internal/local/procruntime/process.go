package procruntime

import "github.com/flotilla/flotilla/internal/local/localk8s"

// Process is the process that runs the container, for callers that measure it (benchmarks read
// its CPU and memory from /proc).
func (r *Running) Process() *localk8s.Process { return r.proc }
