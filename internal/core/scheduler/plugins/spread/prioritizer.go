package spread

import (
	"slices"
	"strings"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// PrioritizerName is the built-in prioritizer name.
const PrioritizerName = clusterv1beta1.PrioritizerSpread

var _ framework.NormalizeScorePlugin = &Prioritizer{}

// Prioritizer is the Spread prioritizer of one placement.
type Prioritizer struct {
	h  framework.Handle
	cs []*constraint
}

// NewPrioritizer returns the Spread prioritizer for the placement's spread constraints.
func NewPrioritizer(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	cs, err := compile(h.Placement())
	if err != nil {
		return nil, err
	}
	return &Prioritizer{h: h, cs: cs}, nil
}

// Name implements framework.Plugin.
func (p *Prioritizer) Name() string { return PrioritizerName }

// Score implements framework.ScorePlugin; NormalizeScore gives the scores.
func (p *Prioritizer) Score(*clusterv1.ManagedCluster) (int64, *framework.Status) { return 0, nil }

// NormalizeScore implements framework.NormalizeScorePlugin with the formula in the package doc.
func (p *Prioritizer) NormalizeScore(clusters []*clusterv1.ManagedCluster, scores []int64) {
	clear(scores)
	if len(p.cs) == 0 {
		return
	}
	for _, c := range p.cs {
		domains := map[string][]int{}
		largest := 0
		for i, cl := range clusters {
			if d, ok := c.domain(cl); ok {
				domains[d] = append(domains[d], i)
				largest = max(largest, len(domains[d]))
			} else {
				scores[i] += framework.MinScore
			}
		}
		for _, idx := range domains {
			slices.SortFunc(idx, func(a, b int) int {
				ca, cb := p.h.InCurrentDecisions(clusters[a].Name), p.h.InCurrentDecisions(clusters[b].Name)
				if ca != cb {
					if ca {
						return -1
					}
					return 1
				}
				return strings.Compare(clusters[a].Name, clusters[b].Name)
			})
			for k, i := range idx {
				if largest <= 1 {
					scores[i] += framework.MaxScore
					continue
				}
				scores[i] += framework.MaxScore - (framework.MaxScore-framework.MinScore)*int64(k)/int64(largest-1)
			}
		}
	}
	for i := range scores {
		scores[i] /= int64(len(p.cs))
	}
}
