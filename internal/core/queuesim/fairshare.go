package queuesim

import (
	"maps"
	"slices"
	"sort"
)

// WaterFill is the weighted max-min fair division of capacity among teams: each team gets
// min(demand, level x weight), with the level as high as the capacity allows, so that a team
// asking less than its part leaves the rest to the others by their weights. Fluid: GPUs and
// gangs are not indivisible here.
func WaterFill(capacity float64, demand, weights []float64) []float64 {
	out := make([]float64, len(demand))
	order := make([]int, 0, len(demand))
	var w float64
	for i := range demand {
		if demand[i] > 0 && weights[i] > 0 {
			order = append(order, i)
			w += weights[i]
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		return demand[order[a]]/weights[order[a]] < demand[order[b]]/weights[order[b]]
	})
	left := capacity
	for k, i := range order {
		level := left / w
		if demand[i] <= level*weights[i] {
			out[i] = demand[i]
			left -= demand[i]
			w -= weights[i]
			continue
		}
		for _, j := range order[k:] { // the rest are all capped by the level
			out[j] = level * weights[j]
		}
		break
	}
	return out
}

// FairShares is the GPUs each team holds under weighted max-min fairness (WaterFill), model by
// model: capacity is the fleet's GPUs per model and demand[t] team t's GPUs per model of the
// jobs it has submitted and not finished; the jobs for any model (key "") share what the models
// leave. It is what a fair scheduler that never leaves a GPU idle while a job could use it would
// give, with no gang or node to get in the way.
func FairShares(capacity map[string]float64, demand []map[string]float64, weights []float64) []float64 {
	out := make([]float64, len(demand))
	for t, byModel := range FairSharesByModel(capacity, demand, weights) {
		for _, a := range byModel {
			out[t] += a
		}
	}
	return out
}

// FairSharesByModel is FairShares before adding up: per team, its fair GPUs of each model of
// capacity, and under key "" its fair part of what the models leave for jobs of any model.
// Models and "" with no share are absent.
func FairSharesByModel(capacity map[string]float64, demand []map[string]float64, weights []float64) []map[string]float64 {
	out := make([]map[string]float64, len(demand))
	for t := range out {
		out[t] = map[string]float64{}
	}
	add := func(t int, m string, a float64) {
		if a > 0 {
			out[t][m] += a
		}
	}
	var left float64
	d := make([]float64, len(demand))
	for _, m := range slices.Sorted(maps.Keys(capacity)) {
		for t := range demand {
			d[t] = demand[t][m]
		}
		used := 0.0
		for t, a := range WaterFill(capacity[m], d, weights) {
			add(t, m, a)
			used += a
		}
		left += capacity[m] - used
	}
	for t := range demand {
		d[t] = demand[t][""]
	}
	for t, a := range WaterFill(left, d, weights) {
		add(t, "", a)
	}
	return out
}
