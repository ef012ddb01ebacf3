package get

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
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
