package scheduler

import (
	"sync"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// scratch holds the per-cluster working arrays of one scheduling. A brief scheduling returns
// nothing that points into them, so they are reused from a pool: at 10,000 clusters they were
// most of the memory a scheduling allocated, and collecting them a quarter of its time.
type scratch struct {
	cands    []candidate
	expls    []ClusterExplanation
	passing  []*candidate
	clusters []*clusterv1.ManagedCluster
	backing  []PrioritizerScore
	raw      []int64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// newScratch returns pooled arrays for a brief scheduling (give them back with release), and
// fresh ones otherwise, since a full result keeps the explanations.
func newScratch(brief bool) *scratch {
	if brief {
		return scratchPool.Get().(*scratch)
	}
	return &scratch{}
}

func (s *scratch) release(brief bool) {
	if brief {
		scratchPool.Put(s)
	}
}

// sized returns a zeroed slice of length n, reusing buf's array when it is large enough.
func sized[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	s := (*buf)[:n]
	clear(s)
	return s
}
