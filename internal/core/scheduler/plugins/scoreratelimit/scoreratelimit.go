// Package scoreratelimit implements spec.scoreRateLimit, which OCM declares but does not do:
// the shortest time between score-only updates of a placement's decisions ("1m" when unset,
// "0s" for none). When the chosen clusters are the ones the PlacementDecisions hold now and only
// their scores or reasons would change, and status.lastScoreUpdateTime is less than the limit
// ago, the decisions keep their current scores and reasons, and the placement is scheduled
// again when the limit has passed. A change of the chosen clusters is written at once, with
// every new score. The controller must supply the current decisions with their scores
// (Snapshot.CurrentScores) and write the Result's LastScoreUpdateTime to
// status.lastScoreUpdateTime; without CurrentScores nothing is held.
package scoreratelimit

import (
	"fmt"
	"regexp"
	"time"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the plugin's name, in explanations.
const Name = "ScoreRateLimit"

// Default is the limit when spec.scoreRateLimit is unset, as the API defaults it.
const Default = time.Minute

const field = "spec.scoreRateLimit"

var pattern = regexp.MustCompile(`^[0-9]+[hms]$`)

var _ framework.DecidePlugin = &Limit{}

// Limit is one placement's score rate limit.
type Limit struct {
	h     framework.Handle
	limit time.Duration
	spec  string
}

// Parse returns the limit that spec.scoreRateLimit says.
func Parse(s string) (time.Duration, error) {
	if s == "" {
		return Default, nil
	}
	d, err := time.ParseDuration(s)
	if !pattern.MatchString(s) || err != nil {
		return 0, &framework.ConfigError{Field: field, Message: fmt.Sprintf("%q is not a duration such as 30s, 1m or 2h", s)}
	}
	return d, nil
}

// New returns the plugin for the placement's spec.scoreRateLimit.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	d, err := Parse(h.Placement().Spec.ScoreRateLimit)
	if err != nil {
		return nil, err
	}
	spec := h.Placement().Spec.ScoreRateLimit
	if spec == "" {
		spec = "1m (the default)"
	}
	return &Limit{h: h, limit: d, spec: spec}, nil
}

// Name implements framework.Plugin.
func (l *Limit) Name() string { return Name }

// Decide implements framework.DecidePlugin: it holds back a score-only change made within the
// limit of the last one.
func (l *Limit) Decide(ds []clusterv1beta1.ClusterDecision) *framework.Status {
	cur, last := l.h.CurrentDecisions(), l.h.Placement().Status.LastScoreUpdateTime
	if l.limit <= 0 || cur == nil || last == nil || len(cur) != len(ds) {
		return nil
	}
	next := last.Add(l.limit)
	if !l.h.Now().Before(next) {
		return nil
	}
	byName := make(map[string]clusterv1beta1.ClusterDecision, len(cur))
	for _, c := range cur {
		byName[c.ClusterName] = c
	}
	changed := false
	for _, d := range ds {
		c, ok := byName[d.ClusterName]
		if !ok {
			return nil // the chosen clusters change: written at once
		}
		changed = changed || c.Score != d.Score || c.Reason != d.Reason
	}
	if !changed {
		return nil
	}
	for i := range ds {
		c := byName[ds[i].ClusterName]
		ds[i].Score, ds[i].Reason = c.Score, c.Reason
	}
	return &framework.Status{Code: framework.Success, RequeueAfter: next.Sub(l.h.Now()),
		Message: fmt.Sprintf("score not written yet: spec.scoreRateLimit is %s and scores were last written at %s; the decision keeps its score until %s",
			l.spec, last.UTC().Format(time.RFC3339), next.UTC().Format(time.RFC3339))}
}
