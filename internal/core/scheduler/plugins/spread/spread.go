// Package spread implements spec.spreadPolicy, which OCM declares but does not do.
//
// SpreadConstraints (a SelectPlugin) keeps the chosen clusters spread over the values
// ("domains") of each constraint's topology key, a label or a cluster claim. The domains are
// those of the clusters that passed the filters, each counting the clusters chosen in it so far.
// A cluster whose domain would then have more than maxSkew above the domain with fewest is
// refused, as is a cluster without the key (as Kubernetes' topology spread does for nodes without
// it: it is in no domain). DoNotSchedule refuses for good; ScheduleAnyway only until no other
// cluster remains, so that such clusters fill the slots left. Every constraint must hold. The
// core offers clusters in rank order, so the result is greedy: each time the best-ranked cluster
// every constraint admits.
//
// Spread (a prioritizer, the built-in name "Spread") makes ranking itself spread: within each
// domain of a constraint, clusters are ordered (this placement's current decisions first, so
// that decisions stay put, then by name) and the k-th (from 0) scores
// 100 - 200*k/(n-1), n being the largest domain's size (100 for all when n <= 1); a cluster
// without the key scores -100. With several constraints the score is the mean, rounded toward
// zero; with none, every cluster scores 0. The top clusters thus take the first of every domain,
// then the second, and so on.
package spread

import (
	"fmt"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the select plugin's name, in explanations.
const Name = "SpreadConstraints"

const field = "spec.spreadPolicy.spreadConstraints"

var _ framework.SelectPlugin = &Constraints{}

// constraint is one compiled spread constraint and its counts.
type constraint struct {
	key     string
	keyType clusterv1beta1.TopologyKeyType
	maxSkew int
	hard    bool
	// counts of chosen clusters per domain of the clusters that passed the filters.
	counts map[string]int
	// min is the smallest count; atMin how many domains have it.
	min, atMin int
}

// domain returns the cluster's value of the topology key.
func (c *constraint) domain(cl *clusterv1.ManagedCluster) (string, bool) {
	if c.keyType == clusterv1beta1.TopologyKeyTypeClaim {
		for _, cc := range cl.Status.ClusterClaims {
			if cc.Name == c.key {
				return cc.Value, true
			}
		}
		return "", false
	}
	v, ok := cl.Labels[c.key]
	return v, ok
}

func (c *constraint) describe() string {
	action := clusterv1beta1.ScheduleAnyway
	if c.hard {
		action = clusterv1beta1.DoNotSchedule
	}
	return fmt.Sprintf("maxSkew %d, %s", c.maxSkew, action)
}

// Constraints is the compiled spreadPolicy of one placement.
type Constraints struct {
	cs []*constraint
}

// compile checks and compiles the placement's spread constraints.
func compile(p *clusterv1beta1.Placement) ([]*constraint, error) {
	var out []*constraint
	for i, t := range p.Spec.SpreadPolicy.SpreadConstraints {
		f := fmt.Sprintf("%s[%d]", field, i)
		c := &constraint{key: t.TopologyKey, keyType: t.TopologyKeyType, maxSkew: int(t.MaxSkew)}
		switch {
		case t.TopologyKey == "":
			return nil, &framework.ConfigError{Field: f + ".topologyKey", Message: "is required: name a label or claim, such as topology.kubernetes.io/zone"}
		case t.TopologyKeyType != clusterv1beta1.TopologyKeyTypeLabel && t.TopologyKeyType != clusterv1beta1.TopologyKeyTypeClaim:
			return nil, &framework.ConfigError{Field: f + ".topologyKeyType", Message: fmt.Sprintf("%q is not a topology key type; use Label or Claim", t.TopologyKeyType)}
		case t.MaxSkew < 0:
			return nil, &framework.ConfigError{Field: f + ".maxSkew", Message: fmt.Sprintf("is %d; it must be at least 1", t.MaxSkew)}
		case t.MaxSkew == 0:
			c.maxSkew = 1 // the API's default
		}
		switch t.WhenUnsatisfiable {
		case clusterv1beta1.DoNotSchedule:
			c.hard = true
		case clusterv1beta1.ScheduleAnyway, "":
		default:
			return nil, &framework.ConfigError{Field: f + ".whenUnsatisfiable", Message: fmt.Sprintf("%q is not an action; use DoNotSchedule or ScheduleAnyway", t.WhenUnsatisfiable)}
		}
		out = append(out, c)
	}
	return out, nil
}

// New compiles the placement's spread constraints.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	cs, err := compile(h.Placement())
	if err != nil || len(cs) == 0 {
		return nil, err // no spreadPolicy: nothing to select
	}
	return &Constraints{cs: cs}, nil
}

// Name implements framework.Plugin.
func (p *Constraints) Name() string { return Name }

// Start implements framework.SelectPlugin: every domain of the ranked clusters starts at 0.
func (p *Constraints) Start(ranked []*clusterv1.ManagedCluster) {
	for _, c := range p.cs {
		c.counts = map[string]int{}
		for _, cl := range ranked {
			if d, ok := c.domain(cl); ok {
				c.counts[d] = 0
			}
		}
		c.min, c.atMin = 0, len(c.counts)
	}
}

// Admit implements framework.SelectPlugin.
func (p *Constraints) Admit(cl *clusterv1.ManagedCluster) *framework.Status {
	var soft *framework.Status
	for _, c := range p.cs {
		var msg string
		d, ok := c.domain(cl)
		switch {
		case !ok:
			msg = fmt.Sprintf("spread: no %s %s, so in no topology (%s)", keyKind(c.keyType), c.key, c.describe())
		case c.counts[d]+1-c.min > c.maxSkew:
			msg = fmt.Sprintf("spread: %s=%s would have %d against min %d (%s)", c.key, d, c.counts[d]+1, c.min, c.describe())
		default:
			continue
		}
		if c.hard {
			return framework.NewStatus(framework.Unschedulable, msg)
		}
		if soft == nil {
			soft = framework.NewStatus(framework.Demoted, msg)
		}
	}
	return soft
}

// Chose implements framework.SelectPlugin: it counts the cluster in its domains, and reopens
// when a domain with fewest gets one more, which raises the minimum.
func (p *Constraints) Chose(cl *clusterv1.ManagedCluster) bool {
	reopen := false
	for _, c := range p.cs {
		d, ok := c.domain(cl)
		if !ok {
			continue
		}
		n := c.counts[d]
		c.counts[d] = n + 1
		if n != c.min {
			continue
		}
		if c.atMin--; c.atMin > 0 {
			continue
		}
		c.min++
		for _, v := range c.counts {
			if v == c.min {
				c.atMin++
			}
		}
		reopen = true
	}
	return reopen
}

func keyKind(t clusterv1beta1.TopologyKeyType) string {
	if t == clusterv1beta1.TopologyKeyTypeClaim {
		return "claim"
	}
	return "label"
}
