package fleetview

import (
	"sort"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/gpuview"
)

// GPUs is the fleet's GPU capacity per model and per cluster.
type GPUs struct {
	// Models are the fleet's totals per model.
	Models []ModelTotal `json:"models"`
	// Clusters are the clusters with GPUs (or the cluster asked for), by name.
	Clusters []ClusterGPUs `json:"clusters"`
	Notes    []string      `json:"notes,omitempty"`
}

// ModelTotal is one GPU model over the fleet.
type ModelTotal struct {
	Model       string `json:"model" jsonschema:"the GPU model; empty for GPUs whose nodes do not name a model"`
	Clusters    int    `json:"clusters" jsonschema:"clusters with GPUs of the model"`
	Allocatable int64  `json:"allocatable" jsonschema:"allocatable GPUs of the model, from the agents' claims"`
	// Free counts only the clusters whose figures are current.
	Free int64 `json:"free" jsonschema:"free GPUs of the model on the clusters whose figures are current"`
	// MostFreeOnANode is the most free GPUs of the model on one node of any cluster.
	MostFreeOnANode int64 `json:"mostFreeOnANode" jsonschema:"the most free GPUs of the model on a single node, over the clusters whose figures are current"`
	// ClustersWithCurrentFigures are the clusters whose Free counts.
	ClustersWithCurrentFigures int `json:"clustersWithCurrentFigures"`
}

// ClusterGPUs is one cluster's GPUs.
type ClusterGPUs struct {
	Cluster   string `json:"cluster"`
	Available string `json:"available" jsonschema:"the cluster's availability: True, False or Unknown"`
	// Allocatable is the cluster's nvidia.com/gpu allocatable over every model.
	Allocatable int64 `json:"allocatable" jsonschema:"allocatable nvidia.com/gpu over every model, from the cluster's status"`
	// Usage is whether the free figures are current, expired, or none (the resource-usage add-on
	// is not enabled on the cluster).
	Usage        string      `json:"usage" jsonschema:"current, expired, or none (the resource-usage add-on is not enabled on the cluster: enable it with flotilla addon enable resource-usage)"`
	ObservedTime string      `json:"observedTime,omitempty"`
	ValidUntil   string      `json:"validUntil,omitempty"`
	Models       []ModelGPUs `json:"models"`
}

// ModelGPUs is one model on one cluster.
type ModelGPUs struct {
	Model       string `json:"model"`
	Allocatable int64  `json:"allocatable" jsonschema:"allocatable GPUs of the model, from the agent's claims (0 when it claims none)"`
	// Figures are the live figures from the cluster's ResourceUsage; absent when it has none of
	// the model.
	Figures *Figures `json:"figures,omitempty"`
}

// Figures are a model's live figures on one cluster, per cluster and per node.
type Figures struct {
	Capacity               int64 `json:"capacity"`
	Allocatable            int64 `json:"allocatable"`
	Requested              int64 `json:"requested"`
	Free                   int64 `json:"free"`
	LargestNodeAllocatable int64 `json:"largestNodeAllocatable" jsonschema:"the most allocatable GPUs of the model on one node"`
	MostFreeOnANode        int64 `json:"mostFreeOnANode"`
	// FreeNodes say how many nodes have at least Free GPUs free, from the largest amount down.
	FreeNodes []FreeNodes `json:"freeNodes" jsonschema:"how many nodes have at least so many GPUs free, from the largest amount down: per-node capacity for gang jobs"`
	// Nodes are each node's GPUs of the model, by name (agents before per-node figures send none).
	Nodes []NodeGPUs `json:"nodes,omitempty" jsonschema:"each node's GPUs of the model, by node name"`
}

// NodeGPUs are one node's GPUs of a model.
type NodeGPUs struct {
	Name        string `json:"name"`
	Allocatable int64  `json:"allocatable"`
	// Requested may exceed Allocatable (pods bound before the node shrank); Free never goes
	// below zero.
	Requested int64 `json:"requested"`
	Free      int64 `json:"free"`
}

// FreeNodes is how many nodes have at least Free free.
type FreeNodes struct {
	Free  int64 `json:"free"`
	Nodes int32 `json:"nodes"`
}

// GPUReport is the GPUs of clusters from their claims and usages at now, of model only when it is
// not empty; all keeps clusters without GPUs.
func GPUReport(clusters []clusterv1.ManagedCluster, usages []usagev1alpha1.ResourceUsage, model string, all bool, now time.Time) GPUs {
	byCluster := gpuview.ByCluster(usages)
	totals := map[string]*ModelTotal{}
	out := GPUs{Models: []ModelTotal{}, Clusters: []ClusterGPUs{}}
	without := 0
	for i := range clusters {
		c := &clusters[i]
		u := byCluster[c.Name]
		state := gpuview.Usage(u, now)
		cg := ClusterGPUs{Cluster: c.Name, Available: ConditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
			Allocatable: gpuview.Allocatable(c), Usage: string(state), Models: []ModelGPUs{}}
		if u != nil {
			if t := u.Status.ObservedTime; t != nil {
				cg.ObservedTime = t.UTC().Format(time.RFC3339)
			}
			if t := u.Status.ValidUntil; t != nil {
				cg.ValidUntil = t.UTC().Format(time.RFC3339)
			}
		}
		models := map[string]*ModelGPUs{}
		for m, n := range gpuview.ByModel(c.Status.ClusterClaims) {
			models[m] = &ModelGPUs{Model: m, Allocatable: n}
		}
		for _, f := range gpuview.FreeFigures(u) {
			mg := models[f.Model]
			if mg == nil {
				mg = &ModelGPUs{Model: f.Model}
				models[f.Model] = mg
			}
			mg.Figures = figures(f)
		}
		for _, mg := range models {
			if model != "" && mg.Model != model {
				continue
			}
			cg.Models = append(cg.Models, *mg)
			t := totals[mg.Model]
			if t == nil {
				t = &ModelTotal{Model: mg.Model}
				totals[mg.Model] = t
			}
			t.Clusters++
			t.Allocatable += mg.Allocatable
			if mg.Figures != nil && state == gpuview.UsageCurrent {
				t.ClustersWithCurrentFigures++
				t.Free += mg.Figures.Free
				t.MostFreeOnANode = max(t.MostFreeOnANode, mg.Figures.MostFreeOnANode)
			}
		}
		sort.Slice(cg.Models, func(i, j int) bool { return cg.Models[i].Model < cg.Models[j].Model })
		if len(cg.Models) == 0 && cg.Allocatable == 0 && !all {
			without++
			continue
		}
		out.Clusters = append(out.Clusters, cg)
	}
	for _, t := range totals {
		out.Models = append(out.Models, *t)
	}
	sort.Slice(out.Models, func(i, j int) bool { return out.Models[i].Model < out.Models[j].Model })
	if without > 0 {
		what := "GPUs"
		if model != "" {
			what = model + " GPUs"
		}
		out.Notes = append(out.Notes, plural(without, "cluster has", "clusters have")+" no "+what+" and "+plural2(without, "is", "are")+" left out")
	}
	return out
}
func figures(f usagev1alpha1.ResourceFigures) *Figures {
	top := f.MostFreeOnANode()
	out := &Figures{Capacity: f.Capacity.Value(), Allocatable: f.Allocatable.Value(), Requested: f.Requested.Value(),
		Free: f.Free.Value(), LargestNodeAllocatable: f.LargestNodeAllocatable.Value(), MostFreeOnANode: top.Value(),
		FreeNodes: make([]FreeNodes, 0, len(f.FreeNodes))}
	for _, n := range f.FreeNodes {
		out.FreeNodes = append(out.FreeNodes, FreeNodes{Free: n.Free.Value(), Nodes: n.Nodes})
	}
	for _, n := range f.Nodes {
		a, r := n.Allocatable.Value(), n.Requested.Value()
		out.Nodes = append(out.Nodes, NodeGPUs{Name: n.Name, Allocatable: a, Requested: r, Free: max(a-r, 0)})
	}
	return out
}
