package mcpserver

import "github.com/flotilla/flotilla/internal/hub/fleetview"

// The tools' reports are internal/hub/fleetview's, which `flotilla dashboard` serves too.
type (
	Cluster        = fleetview.Cluster
	Taint          = fleetview.Taint
	GPUsOutput     = fleetview.GPUs
	ModelTotal     = fleetview.ModelTotal
	ClusterGPUs    = fleetview.ClusterGPUs
	ModelGPUs      = fleetview.ModelGPUs
	Figures        = fleetview.Figures
	FreeNodes      = fleetview.FreeNodes
	WorksOutput    = fleetview.Works
	ClusterWorks   = fleetview.ClusterWorks
	Work           = fleetview.Work
	Workload       = fleetview.Workload
	AdmissionCheck = fleetview.AdmissionCheck
	PodSet         = fleetview.PodSet
	Placement      = fleetview.Placement
	Condition      = fleetview.Condition
	DecisionGroup  = fleetview.DecisionGroup
	Decision       = fleetview.Decision

	WorkloadExplanation = fleetview.WorkloadExplanation
)

var (
	clusterReports   = fleetview.ClusterReports
	gpuReport        = fleetview.GPUReport
	workReport       = fleetview.WorkReport
	workloads        = fleetview.Workloads
	placementReports = fleetview.PlacementReports
	explainWorkload  = fleetview.ExplainWorkload
)
