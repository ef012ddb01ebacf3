package get

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// gpuCountClaimPrefix starts the names of the ClusterClaims that count a cluster's allocatable
// GPUs of one model; the rest of the name is the model, the value the count:
// gpu.flotilla.io/count.NVIDIA-A100-SXM4-80GB = "16".
const gpuCountClaimPrefix = "gpu.flotilla.io/count."

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

// gpusByModel reads the count claims. It skips a claim without a model or whose value is not a
// positive whole number, so a bad claim hides a model rather than printing a count nobody can
// allocate.
func gpusByModel(claims []clusterv1.ManagedClusterClaim) map[string]int64 {
	byModel := map[string]int64{}
	for _, claim := range claims {
		model, ok := strings.CutPrefix(claim.Name, gpuCountClaimPrefix)
		if !ok || model == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(claim.Value), 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		byModel[model] = n
	}
	return byModel
}
