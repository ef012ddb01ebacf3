package get

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// gpus is a cluster's GPUS cell: the allocatable GPUs by model ("16 NVIDIA-A100-SXM4-80GB, 8
// NVIDIA-L4") when the cluster reports count claims, else the total nvidia.com/gpu allocatable
// ("24"), else "-".
func gpus(c *clusterv1.ManagedCluster) string {
	byModel := gpusByModel(c.Status.ClusterClaims)
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
	if q, ok := c.Status.Allocatable[clusterv1.ResourceNvidiaGPU]; ok && q.Sign() > 0 {
		return strconv.FormatInt(q.Value(), 10)
	}
	return "-"
}

// gpusByModel reads the agent's GPU claims: the models claim names the models as the nodes spell
// them, and each model's count claim its allocatable GPUs. It skips a model whose count is missing
// or not a positive whole number, so a bad claim hides a model rather than printing a count
// nobody can allocate.
func gpusByModel(claims []clusterv1.ManagedClusterClaim) map[string]int64 {
	values := map[string]string{}
	for _, c := range claims {
		values[c.Name] = c.Value
	}
	byModel := map[string]int64{}
	for _, model := range strings.Split(values[clusterv1.GPUModelsClaim], ",") {
		if model = strings.TrimSpace(model); model == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(values[clusterv1.GPUCountClaimName(model)]), 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		byModel[model] = n
	}
	return byModel
}

// freeGPUs is a cluster's FREE-GPUS cell, from its ResourceUsage (the built-in add-on
// resource-usage): the free GPUs by model and the most free on one node ("8 NVIDIA-H100-80GB-HBM3
// (4 on one node)"), "0" when none is free, "expired" when the figures are out of date and "-"
// when there are none (the add-on is off on the cluster).
func freeGPUs(u *usagev1alpha1.ResourceUsage, now time.Time) string {
	switch {
	case u == nil:
		return "-"
	case !u.Status.Valid(now):
		return "expired"
	}
	var cells []string
	for _, f := range u.Status.Resources {
		if f.Name == usagev1alpha1.ResourceNvidiaGPU && f.Model != "" {
			cells = append(cells, freeCell(f))
		}
	}
	if len(cells) == 0 {
		f := u.Status.Figures(usagev1alpha1.ResourceNvidiaGPU, "")
		if f == nil {
			return "-"
		}
		cells = append(cells, freeCell(*f))
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
