package workloadfit

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
)

// DefaultSettle is how much newer than an offer a worker's figures must be before they are
// trusted to count the offered workload's pods: MultiKueue copies the workload, the worker's
// Kueue admits it, its pods are created and bound, and the resource-usage agent reports them,
// which takes a few seconds.
const DefaultSettle = 5 * time.Second

// Claims remembers the gangs offered to each worker that its figures may not count yet. A
// worker's ResourceUsage is refreshed every few seconds; without claims every workload judged
// in between sees the same free nodes, and several are offered the one node that holds only one
// of them. JudgeAfter counts a worker's claims as used until its figures were observed Settle
// after the offer. Safe for concurrent use.
type Claims struct {
	// Settle is DefaultSettle when zero.
	Settle time.Duration

	mu     sync.Mutex
	offers map[string]map[types.UID]claim // worker -> workload -> its offer
}

type claim struct {
	gangs []gpufit.Gang
	at    time.Time
}

// Offer records that the workload uid, whose gangs are gangs, was offered to worker at at.
func (c *Claims) Offer(worker string, uid types.UID, gangs []gpufit.Gang, at time.Time) {
	if len(gangs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.offers == nil {
		c.offers = map[string]map[types.UID]claim{}
	}
	if c.offers[worker] == nil {
		c.offers[worker] = map[types.UID]claim{}
	}
	c.offers[worker][uid] = claim{gangs: gangs, at: at}
}

// Of are the gangs offered to worker that its figures, observed at observed, may not count yet,
// other than those of the workload except (which is being judged); it forgets the others.
func (c *Claims) Of(worker string, except types.UID, observed time.Time) []gpufit.Gang {
	if c == nil {
		return nil
	}
	settle := c.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []gpufit.Gang
	for uid, cl := range c.offers[worker] {
		if !observed.Before(cl.at.Add(settle)) {
			delete(c.offers[worker], uid)
			continue
		}
		if uid != except {
			out = append(out, cl.gangs...)
		}
	}
	return out
}
