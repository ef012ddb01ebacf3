package resourceusage

import (
	"cmp"
	"math/bits"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// maxFreeNodes is the most entries a FreeNodes distribution has (the API's limit).
const maxFreeNodes = 64

// maxNodes is the most per-node entries a model's figures have (the API's limit).
const maxNodes = 5000

// group sums one resource over a set of nodes (every counted node, or those of one model).
type group struct {
	name                             corev1.ResourceName
	model                            string
	capacity, allocatable, requested int64
	free, largestAllocatable         int64
	freeNodes                        map[int64]int32 // rounded free amount -> nodes with exactly that much
	// nodes are the group's nodes, kept for a model's group only (ResourceFigures.Nodes).
	nodes []usagev1alpha1.NodeFigures
}

func (g *group) add(capacity, allocatable, requested int64) {
	free := max(allocatable-requested, 0)
	g.capacity += capacity
	g.allocatable += allocatable
	g.requested += requested
	g.free += free
	g.largestAllocatable = max(g.largestAllocatable, allocatable)
	if r := roundDown(g.name, free); r > 0 {
		g.freeNodes[r]++
	}
}

// figures computes the cluster's figures: every resource of the counted nodes' allocatable,
// over every counted node and, for accelerators, over the nodes of each model.
func (t *tally) figures() (nodes int32, out []usagev1alpha1.ResourceFigures) {
	type key struct {
		name  corev1.ResourceName
		model string
	}
	groups := map[key]*group{}
	get := func(k key) *group {
		g := groups[k]
		if g == nil {
			g = &group{name: k.name, model: k.model, freeNodes: map[int64]int32{}}
			groups[k] = g
		}
		return g
	}
	for nodeName, n := range t.nodes {
		if !n.counted {
			continue
		}
		nodes++
		for name, alloc := range n.allocatable {
			c, r := n.capacity[name], n.requested[name]
			get(key{name: name}).add(c, alloc, r)
			if m := n.models[name]; m != "" {
				g := get(key{name: name, model: m})
				g.add(c, alloc, r)
				g.nodes = append(g.nodes, usagev1alpha1.NodeFigures{Name: nodeName, Allocatable: quantity(name, alloc), Requested: quantity(name, r)})
			}
		}
	}
	out = make([]usagev1alpha1.ResourceFigures, 0, len(groups))
	for _, g := range groups {
		out = append(out, g.figures())
	}
	slices.SortFunc(out, func(a, b usagev1alpha1.ResourceFigures) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Model, b.Model))
	})
	return nodes, out
}

func (g *group) figures() usagev1alpha1.ResourceFigures {
	f := usagev1alpha1.ResourceFigures{
		Name: string(g.name), Model: g.model,
		Capacity: quantity(g.name, g.capacity), Allocatable: quantity(g.name, g.allocatable),
		Requested: quantity(g.name, g.requested), Free: quantity(g.name, g.free),
		LargestNodeAllocatable: quantity(g.name, g.largestAllocatable),
	}
	dist := g.freeNodes
	for keep := 2; len(dist) > maxFreeNodes && keep > 0; keep-- {
		dist = coarsen(g.name, dist, keep)
	}
	amounts := make([]int64, 0, len(dist))
	for a := range dist {
		amounts = append(amounts, a)
	}
	slices.SortFunc(amounts, func(a, b int64) int { return cmp.Compare(b, a) })
	slices.SortFunc(g.nodes, func(a, b usagev1alpha1.NodeFigures) int { return cmp.Compare(a.Name, b.Name) })
	f.Nodes = g.nodes[:min(len(g.nodes), maxNodes)]
	var atLeast int32
	for _, a := range amounts {
		atLeast += dist[a]
		f.FreeNodes = append(f.FreeNodes, usagev1alpha1.NodesWithFree{Free: quantity(g.name, a), Nodes: atLeast})
	}
	return f
}

// roundDown rounds a node's free amount down to the distribution's unit: whole cores for cpu,
// GiB for memory, the resource's unit otherwise.
func roundDown(name corev1.ResourceName, v int64) int64 {
	u := unit(name)
	return v / u * u
}

func unit(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return 1000
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return 1 << 30
	}
	return 1
}

// coarsen rounds every amount down to one with at most keep significant bits in the
// distribution's unit (keep 2: 1, 2, 3, 4, 6, 8, 12, 16, 24, ...; keep 1: powers of two, at most
// 63 values), so that a cluster with many different amounts still gets a short distribution that
// never overstates what is free.
func coarsen(name corev1.ResourceName, dist map[int64]int32, keep int) map[int64]int32 {
	u := unit(name)
	out := make(map[int64]int32, len(dist))
	for a, n := range dist {
		out[keepBits(a/u, keep)*u] += n
	}
	return out
}

// keepBits rounds v (positive) down to its top keep significant bits.
func keepBits(v int64, keep int) int64 {
	drop := bits.Len64(uint64(v)) - keep
	if drop <= 0 {
		return v
	}
	return v >> drop << drop
}

// quantity turns an amount back into a Quantity in the resource's usual format.
func quantity(name corev1.ResourceName, v int64) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return *resource.NewQuantity(v, resource.BinarySI)
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}
