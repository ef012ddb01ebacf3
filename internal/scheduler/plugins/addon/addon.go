// Package addon is the AddOn prioritizer: the score named scoreName in the AddOnPlacementScore
// named resourceName in the cluster's namespace. A missing score, or one past its validUntil,
// counts 0; a value outside -100..100 is clamped. Each case puts a warning in the explanation.
package addon

import (
	"fmt"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/scheduler/framework"
)

// Name is the registry key: the score coordinate type.
const Name = string(clusterv1beta1.ScoreCoordinateTypeAddOn)

var _ framework.ScorePlugin = &AddOn{}

// AddOn scores from one AddOnPlacementScore.
type AddOn struct {
	h                       framework.Handle
	resourceName, scoreName string
}

// New returns the plugin for args.Coordinate.AddOn.
func New(h framework.Handle, args framework.Args) (framework.Plugin, error) {
	field := fmt.Sprintf("spec.prioritizerPolicy.configurations[%d].scoreCoordinate.addOn", args.Index)
	a := args.Coordinate.AddOn
	switch {
	case a == nil:
		return nil, &framework.ConfigError{Field: field, Message: "type AddOn needs addOn with resourceName and scoreName"}
	case a.ResourceName == "":
		return nil, &framework.ConfigError{Field: field + ".resourceName", Message: "must name an AddOnPlacementScore"}
	case a.ScoreName == "":
		return nil, &framework.ConfigError{Field: field + ".scoreName", Message: "must name a score in the AddOnPlacementScore"}
	}
	return &AddOn{h: h, resourceName: a.ResourceName, scoreName: a.ScoreName}, nil
}

// Name is AddOn/<resourceName>/<scoreName>, so explanations tell several AddOn scores apart.
func (p *AddOn) Name() string { return Name + "/" + p.resourceName + "/" + p.scoreName }

// Score implements framework.ScorePlugin.
func (p *AddOn) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	s := p.h.AddOnPlacementScore(c.Name, p.resourceName)
	if s == nil {
		return 0, framework.NewStatus(framework.Warning,
			fmt.Sprintf("no AddOnPlacementScore %s/%s; counted as 0", c.Name, p.resourceName))
	}
	if s.Status.ValidUntil != nil && s.Status.ValidUntil.Time.Before(p.h.Now()) {
		return 0, framework.NewStatus(framework.Warning,
			fmt.Sprintf("AddOnPlacementScore %s/%s expired at %s (status.validUntil); counted as 0",
				c.Name, p.resourceName, s.Status.ValidUntil.UTC().Format("2006-01-02T15:04:05Z")))
	}
	for _, item := range s.Status.Scores {
		if item.Name != p.scoreName {
			continue
		}
		v := int64(item.Value)
		if v < framework.MinScore || v > framework.MaxScore {
			clamped := min(max(v, framework.MinScore), framework.MaxScore)
			return clamped, framework.NewStatus(framework.Warning,
				fmt.Sprintf("AddOnPlacementScore %s/%s score %q is %d, outside -100..100; clamped to %d",
					c.Name, p.resourceName, p.scoreName, v, clamped))
		}
		return v, nil
	}
	return 0, framework.NewStatus(framework.Warning,
		fmt.Sprintf("AddOnPlacementScore %s/%s has no score %q in status.scores; counted as 0", c.Name, p.resourceName, p.scoreName))
}
