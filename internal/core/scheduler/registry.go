package scheduler

import (
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/addon"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/balance"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/predicate"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/resource"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/scoreratelimit"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/sortby"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/spread"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/steady"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/tainttoleration"
)

// Plugins says which plugins a Scheduler runs.
type Plugins struct {
	// Filters run in this order; the first that rejects a cluster is the one the explanation names.
	Filters []NamedFactory
	// Prioritizers maps a built-in prioritizer name, or the score coordinate type AddOn, to its
	// factory.
	Prioritizers framework.Registry
	// Selectors take part, in this order, in choosing among the ranked clusters.
	Selectors []NamedFactory
	// Orders maps a spec.sortBy value to its OrderPlugin's factory.
	Orders framework.Registry
	// Deciders run, in this order, over the chosen clusters' decisions.
	Deciders []NamedFactory
}

// NamedFactory is a filter's name and factory.
type NamedFactory struct {
	Name    string
	Factory framework.Factory
}

// DefaultPlugins are OCM's pipeline: predicates, then taints and tolerations; the five
// prioritizers; what OCM declares without doing: the Spread prioritizer, spreadPolicy's
// constraints, sortBy and scoreRateLimit; and GPU fit (plugins/gpufit: the GPUFit filter, active
// with the placement.flotilla.io/gpu annotation, and the GPUFree and GPUBinPack prioritizers).
func DefaultPlugins() Plugins {
	return Plugins{
		Filters: []NamedFactory{
			{Name: predicate.Name, Factory: predicate.New},
			{Name: tainttoleration.Name, Factory: tainttoleration.New},
			{Name: gpufit.Name, Factory: gpufit.New},
		},
		Prioritizers: framework.Registry{
			steady.Name:            steady.New,
			balance.Name:           balance.New,
			resource.CPUName:       resource.NewCPU,
			resource.MemoryName:    resource.NewMemory,
			addon.Name:             addon.New,
			spread.PrioritizerName: spread.NewPrioritizer,
			gpufit.FreeName:        gpufit.NewFree,
			gpufit.BinPackName:     gpufit.NewBinPack,
		},
		Selectors: []NamedFactory{{Name: spread.Name, Factory: spread.New}},
		Orders: framework.Registry{
			sortby.ClusterName: sortby.NewByName,
			sortby.Score:       sortby.NewByScore,
		},
		Deciders: []NamedFactory{{Name: scoreratelimit.Name, Factory: scoreratelimit.New}},
	}
}
