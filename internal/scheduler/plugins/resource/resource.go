// Package resource is the ResourceAllocatableCPU and ResourceAllocatableMemory prioritizers: the
// cluster's status.allocatable of the resource, min-max normalised over the clusters that passed
// the filters to -100..100 (all equal: 100 for every cluster), as OCM does. A cluster that does not
// report the resource counts as 0, with a warning.
package resource

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/scheduler/framework"
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
}

// NewCPU returns the ResourceAllocatableCPU plugin.
func NewCPU(framework.Handle, framework.Args) (framework.Plugin, error) {
	return &Allocatable{name: CPUName, resource: "cpu"}, nil
}

// NewMemory returns the ResourceAllocatableMemory plugin.
func NewMemory(framework.Handle, framework.Args) (framework.Plugin, error) {
	return &Allocatable{name: MemoryName, resource: "memory"}, nil
}

// Name implements framework.Plugin.
func (p *Allocatable) Name() string { return p.name }

// Score returns the raw allocatable amount (millicores for cpu, bytes otherwise).
func (p *Allocatable) Score(c *clusterv1.ManagedCluster) (int64, *framework.Status) {
	q, ok := c.Status.Allocatable[p.resource]
	if !ok {
		return 0, framework.NewStatus(framework.Warning, "status.allocatable."+string(p.resource)+" is not reported; counted as 0")
	}
	if p.resource == "cpu" {
		return q.MilliValue(), nil
	}
	return q.Value(), nil
}

// NormalizeScore implements framework.NormalizeScorePlugin.
func (p *Allocatable) NormalizeScore(_ []*clusterv1.ManagedCluster, scores []int64) {
	Normalize(scores)
}

// Normalize maps values in place from [min, max] to [-100, 100]; all equal gives 100.
func Normalize(scores []int64) {
	if len(scores) == 0 {
		return
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		if hi == lo {
			scores[i] = framework.MaxScore
			continue
		}
		span := float64(framework.MaxScore - framework.MinScore)
		scores[i] = int64(float64(s-lo)/float64(hi-lo)*span + float64(framework.MinScore))
	}
}
