package addon

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

// noPlacement is the placement index of a cluster that no install placement serves: its add-on
// was made by a user, and gets the ClusterManagementAddOn's default configurations at once.
const noPlacement = -1

// served maps each cluster an install placement serves to that placement's index in
// spec.installStrategy.placements.
type served map[string]int

// servedClusters is the placement index of every cluster the views serve. A cluster is in one
// view's Clusters at most (readPlacements gives a cluster several entries select to the last).
func servedClusters(views []placementView) served {
	s := served{}
	for i, v := range views {
		for _, c := range v.Clusters {
			s[c.Name] = i
		}
	}
	return s
}

// placementOf is the index of the placement serving cluster, or noPlacement.
func (s served) placementOf(cluster string) int {
	if i, ok := s[cluster]; ok {
		return i
	}
	return noPlacement
}

// required is the set of clusters that must have the add-on installed.
func (s served) required() map[string]bool {
	out := make(map[string]bool, len(s))
	for c := range s {
		out[c] = true
	}
	return out
}

// readAll says whether every placement's decisions were read: only then may the install plan
// remove add-ons from clusters no placement selects.
func readAll(views []placementView) bool {
	for _, v := range views {
		if v.Err != "" {
			return false
		}
	}
	return true
}

// wantedConfigs are all configurations this reconcile may resolve: the defaults, each
// placement's, and each add-on's own.
func wantedConfigs(cma *addonv1alpha1.ClusterManagementAddOn, placements int, mcas []*addonv1alpha1.ManagedClusterAddOn) []wantedConfig {
	var wanted []wantedConfig
	for i := noPlacement; i < placements; i++ {
		wanted = append(wanted, placementConfigs(cma, i)...)
	}
	for _, m := range mcas {
		wanted = append(wanted, addonConfigs(cma, nil, m)...)
	}
	return wanted
}

// decision is what one reconcile writes after installing: each placement's progression, every
// add-on's desired configurations and whether the rollout reaches it now, and when to look again.
type decision struct {
	// Inputs are the placements' progressions, in spec.installStrategy.placements order.
	Inputs []progressionInput
	// Addons are the add-ons no placement serves, then those of each placement in order.
	Addons []*addonView
	// RecheckAfter is the earliest moment a soak time or a progress deadline ends; 0 for none.
	RecheckAfter time.Duration
}

// decide resolves the desired configurations of every placement and add-on with h and runs each
// placement's rollout strategy over its add-ons. It reads no API and takes time from clk.
func decide(clk clock.PassiveClock, cma *addonv1alpha1.ClusterManagementAddOn, views []placementView, s served,
	mcas []*addonv1alpha1.ManagedClusterAddOn, h hashes) decision {
	inputs := make([]progressionInput, len(views))
	for i, v := range views {
		inputs[i] = progressionInput{View: v, Index: i}
		inputs[i].Desired, inputs[i].Problems = h.resolve(placementConfigs(cma, i))
	}
	defaultDesired, _ := h.resolve(placementConfigs(cma, noPlacement))
	var unserved []*addonView
	for _, m := range mcas {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		i := s.placementOf(m.Namespace)
		v := &addonView{MCA: m, Placement: i}
		v.Desired, v.Problems = h.resolve(addonConfigs(cma, placementConfigs(cma, i), m))
		placementDesired := defaultDesired
		if i != noPlacement {
			placementDesired = inputs[i].Desired
		}
		v.SameAsPlacement = equality.Semantic.DeepEqual(v.Desired, placementDesired)
		v.State = rolloutState(m, v.Desired)
		if i == noPlacement {
			unserved = append(unserved, v)
			continue
		}
		inputs[i].Addons = append(inputs[i].Addons, v)
		if !owned(cma, m) {
			inputs[i].Conflicts = append(inputs[i].Conflicts, m.Namespace+"/"+m.Name)
		}
	}
	var recheck time.Duration
	for i := range inputs {
		if after := rollOut(clk, cma, &inputs[i]); after > 0 && (recheck == 0 || after < recheck) {
			recheck = after
		}
	}
	// Add-ons no placement serves (made by users) get their configurations at once, as in OCM.
	for _, a := range unserved {
		a.InRollout = a.State.Status != rollout.Succeeded
	}
	addons := unserved
	for _, in := range inputs {
		addons = append(addons, in.Addons...)
	}
	return decision{Inputs: inputs, Addons: addons, RecheckAfter: recheck}
}

// rollOut runs in's rollout strategy over its add-ons, marks those it reaches now, and returns
// when to look again (0 for no need). A missing or unreadable placement rolls nothing out.
func rollOut(clk clock.PassiveClock, cma *addonv1alpha1.ClusterManagementAddOn, in *progressionInput) time.Duration {
	if in.View.Missing || in.View.Err != "" {
		return 0
	}
	states := make([]rollout.ClusterStatus, 0, len(in.Addons))
	for _, a := range in.Addons {
		states = append(states, a.State)
	}
	res, err := rollout.Decide(clk, strategyOf(cma, in.Index, in.View.Placement), in.View.Clusters, states)
	if err != nil {
		in.RolloutErr = err.Error()
		return 0
	}
	in.Result = res
	now := map[string]bool{}
	for _, c := range res.ToRollout {
		now[c.Name] = true
	}
	for _, a := range in.Addons {
		a.InRollout = now[a.MCA.Namespace]
	}
	return res.RecheckAfter
}
