package gpufit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// PodSet is one group of identical pods of a gang: Count pods, each asking Per of the resource.
type PodSet struct {
	Name  string
	Count int32
	Per   resource.Quantity
}

// Gang is what a workload's pods ask of one resource: every pod of every pod set must start, on
// nodes of Model ("" for any model) that have the resource free.
type Gang struct {
	Resource string
	Model    string
	PodSets  []PodSet
}

// What names what is counted: the model when one is asked for, else the resource.
func (g Gang) What() string { return Requirement{Resource: g.Resource, Model: g.Model}.What() }

// Pods is how many pods the gang has that ask for the resource.
func (g Gang) Pods() int64 {
	var n int64
	for _, ps := range g.PodSets {
		if ps.Per.Sign() > 0 {
			n += int64(ps.Count)
		}
	}
	return n
}

// FitGang says whether every pod of the gang fits on the nodes the figures count. It places the
// pods one by one on the per-node free amounts (status FreeNodes), the largest pods first, each
// on the node with the least free that holds it. This never promises more than there is (the
// figures round down), and it may refuse a gang that a cleverer packing would fit: a waiting gang
// is cheaper than pods that sit pending. The message says what was asked and what the nodes have.
func FitGang(st *usagev1alpha1.ResourceUsageStatus, g Gang) Verdict {
	return FitGangAfter(st, nil, g)
}

// FitGangAfter is FitGang on what is left once the claimed gangs are placed first, as far as
// they go: gangs offered to the cluster so recently that its figures do not count them yet (a
// claim of another model counts against a gang of any model, and one of any model against
// every model).
func FitGangAfter(st *usagev1alpha1.ResourceUsageStatus, claimed []Gang, g Gang) Verdict {
	what := g.What()
	f := st.Figures(g.Resource, g.Model)
	if f == nil || (f.Capacity.IsZero() && f.Allocatable.IsZero()) {
		return noModel(st, Requirement{Resource: g.Resource, Model: g.Model})
	}
	nodes := perNode(f.FreeNodes)
	var held int64
	for _, c := range claimed {
		if c.Resource == g.Resource && (c.Model == g.Model || c.Model == "" || g.Model == "") {
			n, _ := place(nodes, c)
			held += n
		}
	}
	after := ""
	if held > 0 {
		after = fmt.Sprintf(", less %s offered to it since these figures", plural(held, "pod"))
	}
	placed, ok := place(nodes, g)
	if !ok {
		return Verdict{Message: fmt.Sprintf("needs %s: %s on its nodes (free per node: %s%s)",
			g.describe(), fitting(placed), describeFree(f.FreeNodes), after)}
	}
	all := fmt.Sprintf("all %d pods fit", g.Pods())
	if g.Pods() == 1 {
		all = "its pod fits"
	}
	return Verdict{Fits: true, Message: fmt.Sprintf("%s: %s (free per node: %s%s)", what, all, describeFree(f.FreeNodes), after)}
}

// place takes the gang's pods, the largest first, from the per-node free amounts, each from the
// node with the least free that holds it, until one does not fit; it says how many it placed and
// whether all did.
func place(nodes []int64, g Gang) (int64, bool) {
	sets := slices.Clone(g.PodSets)
	slices.SortStableFunc(sets, func(a, b PodSet) int { return b.Per.Cmp(a.Per) })
	var placed int64
	for _, ps := range sets {
		per := ps.Per.MilliValue()
		if per <= 0 {
			continue
		}
		for range ps.Count {
			i := bestFit(nodes, per)
			if i < 0 {
				return placed, false
			}
			nodes[i] -= per
			placed++
		}
	}
	return placed, true
}

// perNode turns the cumulative counts of FreeNodes (each entry: this many nodes have at least
// this much) into one free amount per node, in milli-units.
func perNode(free []usagev1alpha1.NodesWithFree) []int64 {
	var out []int64
	var seen int32
	for _, e := range free {
		for ; seen < e.Nodes; seen++ {
			out = append(out, e.Free.MilliValue())
		}
	}
	return out
}

// bestFit is the index of the node with the least free that still holds per, or -1.
func bestFit(nodes []int64, per int64) int {
	best := -1
	for i, free := range nodes {
		if free >= per && (best < 0 || free < nodes[best]) {
			best = i
		}
	}
	return best
}

// describe says what the gang asks, pod sets largest first: "2 pods with 8 NVIDIA-H100 each".
func (g Gang) describe() string {
	sets := slices.Clone(g.PodSets)
	slices.SortStableFunc(sets, func(a, b PodSet) int {
		return cmp.Or(b.Per.Cmp(a.Per), cmp.Compare(a.Name, b.Name))
	})
	var parts []string
	for _, ps := range sets {
		if ps.Per.Sign() <= 0 {
			continue
		}
		pods := "1 pod"
		if ps.Count != 1 {
			pods = fmt.Sprintf("%d pods", ps.Count)
		}
		parts = append(parts, fmt.Sprintf("%s with %s %s each", pods, ps.Per.String(), g.What()))
	}
	return strings.Join(parts, " and ")
}

func fitting(n int64) string {
	switch n {
	case 0:
		return "none fit"
	case 1:
		return "only 1 pod fits"
	}
	return fmt.Sprintf("only %d pods fit", n)
}

// describeFree writes the per-node free amounts as "8 on 1 node, 2 on 3 nodes", or "none".
func describeFree(free []usagev1alpha1.NodesWithFree) string {
	var parts []string
	var seen int32
	for _, e := range free {
		if n := e.Nodes - seen; n > 0 {
			parts = append(parts, fmt.Sprintf("%s on %s", e.Free.String(), plural(n, "node")))
		}
		seen = e.Nodes
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
