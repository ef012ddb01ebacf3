// Package balance is the Balance prioritizer: it favors clusters that fewer OTHER placements
// selected. With count the cluster's decisions and maxCount the largest count of any cluster,
// the score is 2*int(100*(0.5 - count/maxCount)), as OCM computes it; 100 when nobody decided.
package balance

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the built-in prioritizer name.
const Name = clusterv1beta1.PrioritizerBalance

var _ framework.ScorePlugin = &Balance{}

// Balance is the plugin for one placement.
type Balance struct {
	counts   map[string]int
	maxCount int
}

// New returns the plugin.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	b := &Balance{counts: h.OtherDecisionCounts()}
	for _, n := range b.counts {
		b.maxCount = max(b.maxCount, n)
	}
	return b, nil
}

// Name implements framework.Plugin.
func (p *Balance) Name() string { return Name }

// Score implements framework.ScorePlugin.
func (p *Balance) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	return Score(p.counts[c.Name], p.maxCount), nil
}

// Score is the Balance score of a cluster with count decisions when the busiest has maxCount.
func Score(count, maxCount int) int64 {
	if maxCount == 0 {
		return framework.MaxScore
	}
	return 2 * int64(float64(framework.MaxScore)*(0.5-float64(count)/float64(maxCount)))
}
