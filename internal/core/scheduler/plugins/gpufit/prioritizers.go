package gpufit

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
	resourceplugin "github.com/flotilla/flotilla/internal/core/scheduler/plugins/resource"
)

// Names of the built-in prioritizers in this package.
const (
	FreeName    = "GPUFree"
	BinPackName = "GPUBinPack"
)

var (
	_ framework.NormalizeScorePlugin = &MostFree{}
	_ framework.NormalizeScorePlugin = &BinPack{}
)

// unknown is the raw score of a cluster without usable figures (scored 0, left out of the
// normalisation); misfit that of one where no node fits (scored MinScore, also left out).
const (
	unknown = math.MinInt64
	misfit  = math.MinInt64 + 1
)

// prioritizerRequirement is the annotation's requirement, or any model of nvidia.com/gpu, one
// per node, without it.
func prioritizerRequirement(h framework.Handle) (Requirement, error) {
	req, ok, err := FromPlacement(h.Placement().Annotations)
	if err != nil {
		return Requirement{}, err
	}
	if !ok {
		req = Requirement{Resource: usagev1alpha1.ResourceNvidiaGPU}
	}
	if !req.Gang() {
		req.PerNode, req.Nodes = resource.MustParse("1"), 0
	}
	return req, nil
}

// MostFree is the GPUFree prioritizer: the more free, the higher.
type MostFree struct {
	h   framework.Handle
	req Requirement
}

// NewFree returns the GPUFree prioritizer.
func NewFree(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	req, err := prioritizerRequirement(h)
	if err != nil {
		return nil, err
	}
	return &MostFree{h: h, req: req}, nil
}

// Name implements framework.Plugin.
func (p *MostFree) Name() string { return FreeName }

// Score is the amount free (in whole units, rounded up).
func (p *MostFree) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	st, why := Lookup(p.h, c.Name)
	if st == nil {
		return unknown, framework.NewStatus(framework.Warning, why+"; scored 0")
	}
	free := Free(st, p.req.Resource, p.req.Model)
	return free.Value(), framework.NewStatus(framework.Success, fmt.Sprintf("%s free %s", free.String(), p.req.What()))
}

// NormalizeScore implements framework.NormalizeScorePlugin: min-max to -100..100 (all equal: 100).
func (p *MostFree) NormalizeScore(_ []*clusterv1.ManagedCluster, scores []int64) {
	known := make([]bool, len(scores))
	for i, s := range scores {
		known[i] = s != unknown
	}
	resourceplugin.Normalize(scores, known)
}

// BinPack is the GPUBinPack prioritizer: the tighter the fit, the higher. The fit is how much
// the smallest node that has perNode free leaves spare, then how much the cluster has free in
// all; a cluster with no such node scores -100.
type BinPack struct {
	h   framework.Handle
	req Requirement
	// spare and free are each scored cluster's figures, for NormalizeScore.
	spare, free map[*clusterv1.ManagedCluster]int64
}

// NewBinPack returns the GPUBinPack prioritizer.
func NewBinPack(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	req, err := prioritizerRequirement(h)
	if err != nil {
		return nil, err
	}
	return &BinPack{h: h, req: req, spare: map[*clusterv1.ManagedCluster]int64{}, free: map[*clusterv1.ManagedCluster]int64{}}, nil
}

// Name implements framework.Plugin.
func (p *BinPack) Name() string { return BinPackName }

// Score returns the spare amount on the smallest fitting node; NormalizeScore turns it, with
// the total free, into the score.
func (p *BinPack) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	st, why := Lookup(p.h, c.Name)
	if st == nil {
		return unknown, framework.NewStatus(framework.Warning, why+"; scored 0")
	}
	f := st.Figures(p.req.Resource, p.req.Model)
	var smallest *resource.Quantity
	if f != nil {
		// FreeNodes go from the largest amount down: the last that fits is the smallest.
		for i := range f.FreeNodes {
			if f.FreeNodes[i].Free.Cmp(p.req.PerNode) < 0 {
				break
			}
			smallest = &f.FreeNodes[i].Free
		}
	}
	if smallest == nil {
		return misfit, framework.NewStatus(framework.Warning, fmt.Sprintf("no node has at least %s free %s; scored %d",
			p.req.PerNode.String(), p.req.What(), framework.MinScore))
	}
	spare := smallest.DeepCopy()
	spare.Sub(p.req.PerNode)
	p.spare[c], p.free[c] = spare.Value(), f.Free.Value()
	return spare.Value(), framework.NewStatus(framework.Success, fmt.Sprintf("smallest node with at least %s free %s has %s (%s spare); %s free in total",
		p.req.PerNode.String(), p.req.What(), smallest.String(), spare.String(), f.Free.String()))
}

// NormalizeScore orders the fitting clusters by (spare, total free), least first, and maps that
// order's keys min-max to 100..-100 (all equal: 100).
func (p *BinPack) NormalizeScore(clusters []*clusterv1.ManagedCluster, scores []int64) {
	var maxFree int64
	for i, c := range clusters {
		if scores[i] > misfit {
			maxFree = max(maxFree, p.free[c])
		}
	}
	// key = spare + free/(maxFree+1): spare decides, free breaks ties, and both are exact
	// enough in a float64 for any GPU count.
	keys := make([]float64, len(clusters))
	first, lo, hi := true, 0.0, 0.0
	for i, c := range clusters {
		if scores[i] <= misfit {
			continue
		}
		k := float64(p.spare[c]) + float64(p.free[c])/float64(maxFree+1)
		keys[i] = k
		if first {
			lo, hi, first = k, k, false
		}
		lo, hi = math.Min(lo, k), math.Max(hi, k)
	}
	for i := range scores {
		switch {
		case scores[i] == unknown:
			scores[i] = 0
		case scores[i] == misfit:
			scores[i] = framework.MinScore
		case hi == lo:
			scores[i] = framework.MaxScore
		default:
			ratio := (hi - keys[i]) / (hi - lo)
			scores[i] = int64((ratio - 0.5) * 2.0 * float64(framework.MaxScore))
		}
	}
}
