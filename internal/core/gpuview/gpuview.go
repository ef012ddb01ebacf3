package gpuview

import (
	"strconv"
	"strings"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// ByModel reads the agent's GPU claims: the models claim names the models as the nodes spell
// them, and each model's count claim its allocatable GPUs. It skips a model whose count is missing
// or not a positive whole number, so a bad claim hides a model rather than reporting a count
// nobody can allocate.
func ByModel(claims []clusterv1.ManagedClusterClaim) map[string]int64 {
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

// Allocatable is the cluster's allocatable nvidia.com/gpu over every model, as its status
// reports it; 0 when it reports none.
func Allocatable(c *clusterv1.ManagedCluster) int64 {
	if q, ok := c.Status.Allocatable[clusterv1.ResourceNvidiaGPU]; ok && q.Sign() > 0 {
		return q.Value()
	}
	return 0
}

// UsageState says whether a cluster's free figures may be used.
type UsageState string

const (
	// UsageCurrent figures were written and have not expired.
	UsageCurrent UsageState = "current"
	// UsageExpired figures are out of date: the add-on stopped reporting, or has not written any.
	UsageExpired UsageState = "expired"
	// UsageNone means the cluster has no ResourceUsage: resource-usage is not enabled on it.
	UsageNone UsageState = "none"
)

// Usage is the state of u, a cluster's ResourceUsage (nil when it has none), at now.
func Usage(u *usagev1alpha1.ResourceUsage, now time.Time) UsageState {
	switch {
	case u == nil:
		return UsageNone
	case !u.Status.Valid(now):
		return UsageExpired
	default:
		return UsageCurrent
	}
}

// FreeFigures are u's nvidia.com/gpu figures: one per model when the nodes name their models,
// else the figures over every node, else none. They are what a reader wants per model; the
// all-model figures are left out when per-model ones exist, since they add up the same GPUs.
func FreeFigures(u *usagev1alpha1.ResourceUsage) []usagev1alpha1.ResourceFigures {
	if u == nil {
		return nil
	}
	var out []usagev1alpha1.ResourceFigures
	for _, f := range u.Status.Resources {
		if f.Name == usagev1alpha1.ResourceNvidiaGPU && f.Model != "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		if f := u.Status.Figures(usagev1alpha1.ResourceNvidiaGPU, ""); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// ByCluster indexes usages, the hub's ResourceUsages, by cluster: each cluster's is the one named
// usagev1alpha1.ResourceUsageName in its namespace; others are ignored.
func ByCluster(usages []usagev1alpha1.ResourceUsage) map[string]*usagev1alpha1.ResourceUsage {
	out := make(map[string]*usagev1alpha1.ResourceUsage, len(usages))
	for i := range usages {
		if u := &usages[i]; u.Name == usagev1alpha1.ResourceUsageName {
			out[u.Namespace] = u
		}
	}
	return out
}
