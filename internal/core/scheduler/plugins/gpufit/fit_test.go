package gpufit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

const a100 = "NVIDIA-A100-SXM4-80GB"

// figures are nvidia.com/gpu figures of one model (and the same over every node) with free
// amounts per node.
func figures(model string, perNode ...int64) []usagev1alpha1.ResourceFigures {
	var total int64
	counts := map[int64]int32{}
	var amounts []int64
	for _, n := range perNode {
		total += n
		if n > 0 {
			if counts[n] == 0 {
				amounts = append(amounts, n)
			}
			counts[n]++
		}
	}
	// largest first, each count including the larger amounts
	for i := range amounts {
		for j := i + 1; j < len(amounts); j++ {
			if amounts[j] > amounts[i] {
				amounts[i], amounts[j] = amounts[j], amounts[i]
			}
		}
	}
	var dist []usagev1alpha1.NodesWithFree
	var seen int32
	for _, a := range amounts {
		seen += counts[a]
		dist = append(dist, usagev1alpha1.NodesWithFree{Free: *resource.NewQuantity(a, resource.DecimalSI), Nodes: seen})
	}
	capacity := *resource.NewQuantity(int64(len(perNode))*8, resource.DecimalSI)
	f := usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Capacity: capacity, Allocatable: capacity,
		Free: *resource.NewQuantity(total, resource.DecimalSI), FreeNodes: dist}
	m := f
	m.Model = model
	return []usagev1alpha1.ResourceFigures{f, m}
}

func TestFit(t *testing.T) {
	q := resource.MustParse
	gang := func(model string, perNode string, nodes int32) Requirement {
		return Requirement{Resource: usagev1alpha1.ResourceNvidiaGPU, Model: model, PerNode: q(perNode), Nodes: nodes}
	}
	cases := map[string]struct {
		resources []usagev1alpha1.ResourceFigures
		req       Requirement
		want      Verdict
	}{
		"gang fit: total enough, no node enough": {resources: figures(a100, 8, 4, 4), req: gang(a100, "8", 2),
			want: Verdict{Message: "needs 2 nodes with at least 8 free " + a100 + ": 16 free in total, but only 1 node has at least 8 free (most on one node: 8)"}},
		"gang fit: no node at all": {resources: figures(a100, 4, 4, 4, 4), req: gang(a100, "8", 1),
			want: Verdict{Message: "needs 1 node with at least 8 free " + a100 + ": 16 free in total, but no node has at least 8 free (most on one node: 4)"}},
		"gang fits": {resources: figures(a100, 8, 8, 3), req: gang(a100, "8", 2),
			want: Verdict{Fits: true, Message: a100 + ": 2 nodes with at least 8 free (needs 2), 19 free in total, most on one node 8"}},
		"any model": {resources: figures(a100, 8, 8), req: gang("", "8", 2),
			want: Verdict{Fits: true, Message: "nvidia.com/gpu: 2 nodes with at least 8 free (needs 2), 16 free in total, most on one node 8"}},
		"other model": {resources: figures(a100, 8, 8), req: gang("NVIDIA-H100-80GB-HBM3", "1", 1),
			want: Verdict{NoModel: true, Message: "has no nodes with NVIDIA-H100-80GB-HBM3 (nvidia.com/gpu); it has " + a100}},
		"no GPUs": {req: gang("", "1", 1), want: Verdict{NoModel: true, Message: "has no nodes with nvidia.com/gpu"}},
		"total short": {resources: figures(a100, 8, 8), req: Requirement{Resource: usagev1alpha1.ResourceNvidiaGPU, Total: q("17")},
			want: Verdict{Message: "needs 17 free nvidia.com/gpu in total: 16 free"}},
		"total enough": {resources: figures(a100, 8, 8), req: Requirement{Resource: usagev1alpha1.ResourceNvidiaGPU, Total: q("16")},
			want: Verdict{Fits: true, Message: "nvidia.com/gpu: 16 free in total (needs 16)"}},
		"all busy: nodes but nothing free": {resources: figures(a100, 0, 0), req: gang(a100, "1", 1),
			want: Verdict{Message: "needs 1 node with at least 1 free " + a100 + ": 0 free in total, but no node has at least 1 free (most on one node: 0)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := &usagev1alpha1.ResourceUsageStatus{Resources: tc.resources}
			if diff := cmp.Diff(tc.want, Fit(st, tc.req)); diff != "" {
				t.Errorf("Fit() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsable(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	cases := map[string]struct {
		u       *usagev1alpha1.ResourceUsage
		wantWhy string
	}{
		"valid":   {u: &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: at(-time.Minute), ValidUntil: at(time.Minute)}}},
		"missing": {wantWhy: "no ResourceUsage c1/resource-usage: enable the resource-usage add-on: `flotilla addon enable resource-usage --clusters c1`"},
		"not written": {u: &usagev1alpha1.ResourceUsage{},
			wantWhy: "ResourceUsage c1/resource-usage has no figures yet (status.observedTime is unset): enable the resource-usage add-on: `flotilla addon enable resource-usage --clusters c1`, and check that it is available"},
		"expired": {u: &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: at(-time.Hour), ValidUntil: at(-time.Second)}},
			wantWhy: "ResourceUsage c1/resource-usage expired at 2026-01-01T00:00:59Z (status.validUntil): its agent stopped refreshing it; check the resource-usage add-on of c1"},
		"expires exactly now": {u: &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: at(-time.Hour), ValidUntil: at(0)}},
			wantWhy: "ResourceUsage c1/resource-usage expired at 2026-01-01T00:01:00Z (status.validUntil): its agent stopped refreshing it; check the resource-usage add-on of c1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, why := Usable(tc.u, "c1", now)
			if diff := cmp.Diff(tc.wantWhy, why); diff != "" {
				t.Errorf("Usable() why (-want +got):\n%s", diff)
			}
			if (st == nil) != (tc.wantWhy != "") {
				t.Errorf("Usable() figures = %v, want them only when usable", st)
			}
		})
	}
}
