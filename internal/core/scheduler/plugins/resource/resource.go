// Package resource is the ResourceAllocatableCPU and ResourceAllocatableMemory prioritizers: the
// cluster's status.allocatable of the resource, min-max normalised over the clusters that passed
// the filters to -100..100 (all equal: 100 for every cluster), as OCM does. A cluster that does not
// report the resource (allocatable and capacity) scores 0, with a warning, and is left out of the
// minimum and maximum.
package resource

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
	"math"
)

// Names of the built-in prioritizers in this package.
const (
	CPUName    = clusterv1beta1.PrioritizerResourceAllocatableCPU
	MemoryName = clusterv1beta1.PrioritizerResourceAllocatableMemory
)

var _ framework.NormalizeScorePlugin = &Allocatable{}

// Allocatable scores one resource.
type Allocatable struct {
	name     string
	resource clusterv1.ResourceName
	// values are the snapshot's clusters' allocatable amounts, or unreported (Handle.PerCluster).
	values map[*clusterv1.ManagedCluster]int64
}

// NewCPU returns the ResourceAllocatableCPU plugin.
func NewCPU(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	return newAllocatable(h, CPUName, "cpu"), nil
}

// NewMemory returns the ResourceAllocatableMemory plugin.
func NewMemory(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	return newAllocatable(h, MemoryName, "memory"), nil
}

func newAllocatable(h framework.Handle, name string, r clusterv1.ResourceName) *Allocatable {
	p := &Allocatable{name: name, resource: r}
	p.values = h.PerCluster("allocatable/"+string(r), p.raw)
	return p
}

// raw is the cluster's allocatable amount (milli-units for cpu), or unreported.
func (p *Allocatable) raw(c *clusterv1.ManagedCluster) int64 {
	if v, ok := p.allocatable(c); ok {
		return v
	}
	return unreported
}

// Name implements framework.Plugin.
func (p *Allocatable) Name() string { return p.name }

// Score returns the raw allocatable amount (millicores for cpu, bytes otherwise). As OCM, a
// cluster that reports no allocatable or no capacity of the resource scores 0 and does not count
// towards the minimum and maximum.
func (p *Allocatable) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	v, ok := p.values[c]
	if !ok {
		v = p.raw(c)
	}
	if v == unreported {
		return unreported, framework.NewStatus(framework.Warning, "status.allocatable."+string(p.resource)+
			" or status.capacity."+string(p.resource)+" is not reported; scored 0")
	}
	return v, nil
}

func (p *Allocatable) allocatable(c *clusterv1.ManagedCluster) (int64, bool) {
	q, ok := c.Status.Allocatable[p.resource]
	if _, hasCapacity := c.Status.Capacity[p.resource]; !ok || !hasCapacity {
		return 0, false
	}
	if p.resource == "cpu" {
		return q.MilliValue(), true
	}
	return q.Value(), true
}

// unreported is the raw score of a cluster that does not report the resource, so that
// NormalizeScore need not read the cluster's resources again; it never reaches a total.
const unreported = math.MinInt64

// NormalizeScore implements framework.NormalizeScorePlugin.
func (p *Allocatable) NormalizeScore(clusters []*clusterv1.ManagedCluster, scores []int64) {
	reported := make([]bool, len(clusters))
	for i := range clusters {
		reported[i] = scores[i] != unreported
	}
	Normalize(scores, reported)
}

// Normalize maps, in place, the scores of the reported clusters from [min, max] over them to
// [-100, 100] with OCM's formula (all equal gives 100); the others score 0.
func Normalize(scores []int64, reported []bool) {
	first := true
	var lo, hi int64
	for i, s := range scores {
		if !reported[i] {
			continue
		}
		if first {
			lo, hi, first = s, s, false
		}
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		switch {
		case !reported[i]:
			scores[i] = 0
		case hi == lo:
			scores[i] = framework.MaxScore
		default:
			ratio := float64(s-lo) / float64(hi-lo)
			scores[i] = int64((ratio - 0.5) * 2.0 * float64(framework.MaxScore))
		}
	}
}
