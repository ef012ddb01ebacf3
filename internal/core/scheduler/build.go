package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// pipeline is one placement's plugins, built for one scheduling.
type pipeline struct {
	filters      []framework.FilterPlugin
	prioritizers []prioritizer
	selectors    []framework.SelectPlugin
	deciders     []framework.DecidePlugin
	order        order
	groups       *grouper
}

// order sorts a group's clusters with the OrderPlugin of spec.sortBy.
type order struct{ plugin framework.OrderPlugin }

func (o order) sort(clusters []string, byName map[string]Decision) {
	if o.plugin == nil {
		return // already by name
	}
	cd := func(c string) clusterv1beta1.ClusterDecision {
		d := byName[c]
		return clusterv1beta1.ClusterDecision{ClusterName: c, Score: d.Score, Reason: d.Reason}
	}
	slices.SortFunc(clusters, func(a, b string) int { return o.plugin.Compare(cd(a), cd(b)) })
}

// buildAll makes the plugins of factories, each of which must implement T.
func buildAll[T framework.Plugin](h *handle, factories []NamedFactory, kind string) ([]T, error) {
	out := make([]T, 0, len(factories))
	for _, nf := range factories {
		pl, err := nf.Factory(h, framework.Args{Index: -1})
		if err != nil {
			return nil, err
		}
		if pl == nil {
			continue // not used by this placement
		}
		t, ok := pl.(T)
		if !ok {
			return nil, fmt.Errorf("plugin %s is not a %s", nf.Name, kind)
		}
		out = append(out, t)
	}
	return out, nil
}

// build makes this placement's plugins; a *framework.ConfigError means misconfigured.
func (s *Scheduler) build(h *handle) (*pipeline, error) {
	pl := &pipeline{}
	var err error
	if pl.filters, err = buildAll[framework.FilterPlugin](h, s.Plugins.Filters, "filter"); err != nil {
		return nil, err
	}
	if pl.prioritizers, err = s.buildPrioritizers(h); err != nil {
		return nil, err
	}
	if pl.selectors, err = buildAll[framework.SelectPlugin](h, s.Plugins.Selectors, "select plugin"); err != nil {
		return nil, err
	}
	if pl.deciders, err = buildAll[framework.DecidePlugin](h, s.Plugins.Deciders, "decide plugin"); err != nil {
		return nil, err
	}
	if pl.order, err = s.buildOrder(h); err != nil {
		return nil, err
	}
	if pl.groups, err = newGrouper(h.placement.Spec.DecisionStrategy.GroupStrategy); err != nil {
		return nil, err
	}
	return pl, nil
}

// buildOrder makes the OrderPlugin that spec.sortBy names (ClusterName when unset). The groups
// come sorted by name, so the ClusterName order needs no plugin unless one is registered.
func (s *Scheduler) buildOrder(h *handle) (order, error) {
	key := string(h.placement.Spec.SortBy)
	if key == "" {
		key = string(clusterv1beta1.SortByClusterName)
	}
	factory, ok := s.Plugins.Orders[key]
	if !ok {
		if key == string(clusterv1beta1.SortByClusterName) {
			return order{}, nil
		}
		known := make([]string, 0, len(s.Plugins.Orders))
		for k := range s.Plugins.Orders {
			known = append(known, k)
		}
		slices.Sort(known)
		return order{}, &framework.ConfigError{Field: "spec.sortBy", Message: fmt.Sprintf("unknown order %q; use one of %s", key, strings.Join(known, ", "))}
	}
	p, err := factory(h, framework.Args{Index: -1})
	if err != nil {
		return order{}, err
	}
	o, ok := p.(framework.OrderPlugin)
	if !ok {
		return order{}, fmt.Errorf("plugin %s is not an order", key)
	}
	return order{plugin: o}, nil
}

func (s *Scheduler) buildPrioritizers(h *handle) ([]prioritizer, error) {
	configs, err := s.configurations(h.placement.Spec.PrioritizerPolicy)
	if err != nil {
		return nil, err
	}
	var prios []prioritizer
	for _, c := range configs {
		if c.weight == 0 {
			continue
		}
		field := fmt.Sprintf("spec.prioritizerPolicy.configurations[%d].scoreCoordinate", c.index)
		key := c.coord.BuiltIn
		switch c.coord.Type {
		case clusterv1beta1.ScoreCoordinateTypeAddOn:
			key = string(c.coord.Type)
		case clusterv1beta1.ScoreCoordinateTypeBuiltIn, "":
			field += ".builtIn"
		default:
			return nil, &framework.ConfigError{Field: field + ".type",
				Message: fmt.Sprintf("unknown type %q; use BuiltIn or AddOn", c.coord.Type)}
		}
		factory, ok := s.Plugins.Prioritizers[key]
		if !ok || c.coord.Type != clusterv1beta1.ScoreCoordinateTypeAddOn && key == string(clusterv1beta1.ScoreCoordinateTypeAddOn) {
			return nil, &framework.ConfigError{Field: field,
				Message: fmt.Sprintf("unknown built-in prioritizer %q; known: %s", key, strings.Join(s.builtInNames(), ", "))}
		}
		pl, err := factory(h, framework.Args{Coordinate: c.coord, Index: c.index})
		if err != nil {
			return nil, err
		}
		sp, ok := pl.(framework.ScorePlugin)
		if !ok {
			return nil, fmt.Errorf("plugin %s is not a prioritizer", key)
		}
		prios = append(prios, prioritizer{plugin: sp, weight: c.weight})
	}
	return prios, nil
}

// decide runs the decide plugins over the decisions, notes in each changed decision's
// explanation the message of the plugin that changed it, and returns the earlier of requeue
// and the plugins' requeues.
func decide(deciders []framework.DecidePlugin, ds []clusterv1beta1.ClusterDecision, chosen []*candidate, requeue time.Duration) time.Duration {
	before := slices.Clone(ds)
	for _, d := range deciders {
		st := d.Decide(ds)
		if st == nil {
			continue
		}
		if st.RequeueAfter > 0 && (requeue == 0 || st.RequeueAfter < requeue) {
			requeue = st.RequeueAfter
		}
		for i := range ds {
			if ds[i] != before[i] && st.Message != "" {
				chosen[i].expl.Message = joinMsg(chosen[i].expl.Message, d.Name()+": "+st.Message)
			}
		}
		copy(before, ds)
	}
	return requeue
}

// lastScoreUpdate is status.lastScoreUpdateTime once the decisions are written: now when one
// of them holds a score or reason the current decisions do not, else the placement's. Without
// the current decisions (Snapshot.CurrentScores nil) it is the placement's.
func lastScoreUpdate(p *clusterv1beta1.Placement, snap *Snapshot, ds []clusterv1beta1.ClusterDecision, now time.Time) *metav1.Time {
	last := p.Status.LastScoreUpdateTime
	if snap.CurrentScores == nil {
		return last
	}
	cur := make(map[string]clusterv1beta1.ClusterDecision, len(snap.CurrentScores))
	for _, c := range snap.CurrentScores {
		cur[c.ClusterName] = c
	}
	for _, d := range ds {
		if c, ok := cur[d.ClusterName]; !ok || c != d {
			t := metav1.NewTime(now)
			return &t
		}
	}
	return last
}
