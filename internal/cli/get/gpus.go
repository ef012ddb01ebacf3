package get

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/gpuview"
)

// gpus is a cluster's GPUS cell: the allocatable GPUs by model ("16 NVIDIA-A100-SXM4-80GB, 8
// NVIDIA-L4") when the cluster reports count claims, else the total nvidia.com/gpu allocatable
// ("24"), else "-".
func gpus(c *clusterv1.ManagedCluster) string {
	byModel := gpuview.ByModel(c.Status.ClusterClaims)
	if len(byModel) > 0 {
		models := make([]string, 0, len(byModel))
		for m := range byModel {
			models = append(models, m)
		}
		sort.Strings(models)
		cells := make([]string, len(models))
		for i, m := range models {
			cells[i] = fmt.Sprintf("%d %s", byModel[m], m)
		}
		return strings.Join(cells, ", ")
	}
	if n := gpuview.Allocatable(c); n > 0 {
		return strconv.FormatInt(n, 10)
	}
	return "-"
}

// freeGPUs is a cluster's FREE-GPUS cell, from its ResourceUsage (the built-in add-on
// resource-usage): the free GPUs by model and the most free on one node ("8 NVIDIA-H100-80GB-HBM3
// (4 on one node)"), "0" when none is free, "expired" when the figures are out of date and "-"
// when there are none (the add-on is off on the cluster).
func freeGPUs(u *usagev1alpha1.ResourceUsage, now time.Time) string {
	switch gpuview.Usage(u, now) {
	case gpuview.UsageNone:
		return "-"
	case gpuview.UsageExpired:
		return "expired"
	}
	figures := gpuview.FreeFigures(u)
	if len(figures) == 0 {
		return "-"
	}
	cells := make([]string, len(figures))
	for i, f := range figures {
		cells[i] = freeCell(f)
	}
	return strings.Join(cells, ", ")
}

func freeCell(f usagev1alpha1.ResourceFigures) string {
	if f.Free.Sign() <= 0 {
		return strings.TrimSpace("0 " + f.Model)
	}
	top := f.MostFreeOnANode()
	return strings.TrimSpace(fmt.Sprintf("%s %s", f.Free.String(), f.Model)) + fmt.Sprintf(" (%s on one node)", top.String())
}
