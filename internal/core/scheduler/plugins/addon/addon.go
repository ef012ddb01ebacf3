// Package addon is the AddOn prioritizer: the score named scoreName in the AddOnPlacementScore
// named resourceName in the cluster's namespace. A missing score, or one past its validUntil,
// counts 0; a value outside -100..100 is clamped. Each case puts a warning in the explanation.
package addon

import (
	"fmt"
	"math"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the registry key: the score coordinate type.
const Name = string(clusterv1beta1.ScoreCoordinateTypeAddOn)

var _ framework.ScorePlugin = &AddOn{}

// AddOn scores from one AddOnPlacementScore.
type AddOn struct {
	h                       framework.Handle
	resourceName, scoreName string
	// values and validUntil are, per cluster of the snapshot, the score (or noScore) and its
	// AddOnPlacementScore's status.validUntil in Unix nanoseconds (0 when unset), read once per
	// snapshot (Handle.PerCluster).
	values, validUntil map[*clusterv1.ManagedCluster]int64
}

// noScore marks a cluster whose score is missing: Score then says why.
const noScore = math.MinInt64

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
	p := &AddOn{h: h, resourceName: a.ResourceName, scoreName: a.ScoreName}
	key := a.ResourceName + "\x00" + a.ScoreName
	p.values = h.PerCluster("addon-score/"+key, func(c *clusterv1.ManagedCluster) int64 {
		if s := h.AddOnPlacementScore(c.Name, p.resourceName); s != nil {
			for _, item := range s.Status.Scores {
				if item.Name == p.scoreName {
					return int64(item.Value)
				}
			}
		}
		return noScore
	})
	p.validUntil = h.PerCluster("addon-valid-until/"+a.ResourceName, func(c *clusterv1.ManagedCluster) int64 {
		if s := h.AddOnPlacementScore(c.Name, p.resourceName); s != nil && s.Status.ValidUntil != nil {
			return s.Status.ValidUntil.UnixNano()
		}
		return 0
	})
	return p, nil
}

// Name is AddOn/<resourceName>/<scoreName>, so explanations tell several AddOn scores apart.
func (p *AddOn) Name() string { return Name + "/" + p.resourceName + "/" + p.scoreName }

// Score implements framework.ScorePlugin.
func (p *AddOn) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	// The common case from the per-snapshot tables: a score in range, not expired.
	if v, ok := p.values[c]; ok && v >= framework.MinScore && v <= framework.MaxScore {
		if until := p.validUntil[c]; until == 0 || !time.Unix(0, until).Before(p.h.Now()) {
			return v, nil
		}
	}
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
