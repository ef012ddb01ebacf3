// Package steady is the Steady prioritizer: 100 for a cluster among the placement's current
// decisions, 0 otherwise, so that decisions do not move without a reason.
package steady

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the built-in prioritizer name.
const Name = clusterv1beta1.PrioritizerSteady

var _ framework.ScorePlugin = &Steady{}

// Steady is the plugin for one placement.
type Steady struct{ h framework.Handle }

// New returns the plugin.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) { return &Steady{h: h}, nil }

// Name implements framework.Plugin.
func (p *Steady) Name() string { return Name }

// Score implements framework.ScorePlugin.
func (p *Steady) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	if p.h.InCurrentDecisions(c.Name) {
		return framework.MaxScore, nil
	}
	return 0, nil
}
