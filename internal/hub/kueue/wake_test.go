package kueue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// figures is a ResourceUsage with one figure per entry: name, model, free in all, and free per
// node as {amount, nodes with at least it} pairs.
func figures(entries ...usagev1alpha1.ResourceFigures) *usagev1alpha1.ResourceUsage {
	return &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{Resources: entries}}
}

func gpus(model string, free int64, perNode ...int64) usagev1alpha1.ResourceFigures {
	f := usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Model: model, Free: *resource.NewQuantity(free, resource.DecimalSI)}
	for i := 0; i+1 < len(perNode); i += 2 {
		f.FreeNodes = append(f.FreeNodes, usagev1alpha1.NodesWithFree{Free: *resource.NewQuantity(perNode[i], resource.DecimalSI), Nodes: int32(perNode[i+1])})
	}
	return f
}

func TestFreed(t *testing.T) {
	cpu := func(free string) usagev1alpha1.ResourceFigures {
		return usagev1alpha1.ResourceFigures{Name: "cpu", Free: resource.MustParse(free), FreeNodes: []usagev1alpha1.NodesWithFree{{Free: resource.MustParse(free), Nodes: 1}}}
	}
	tests := []struct {
		name          string
		before, after *usagev1alpha1.ResourceUsage
		want          bool
	}{
		{"nothing changed", figures(gpus("H100", 8, 8, 1)), figures(gpus("H100", 8, 8, 1)), false},
		{"more GPUs free", figures(gpus("H100", 8, 8, 1)), figures(gpus("H100", 12, 8, 1, 4, 2)), true},
		{"fewer GPUs free", figures(gpus("H100", 12, 8, 1, 4, 2)), figures(gpus("H100", 8, 8, 1)), false},
		// 4 + 4 free become 8 on one node: the same total, but a pod of 8 fits now.
		{"the same total on fewer nodes", figures(gpus("H100", 8, 4, 2)), figures(gpus("H100", 8, 8, 1)), true},
		// 8 free on one node become 4 on each of two: two pods of 4 fit now.
		{"the same total on more nodes", figures(gpus("H100", 8, 8, 1)), figures(gpus("H100", 8, 4, 2)), true},
		{"less on each node", figures(gpus("H100", 8, 4, 2)), figures(gpus("H100", 6, 4, 1, 2, 2)), false},
		{"only cpu freed", figures(cpu("4"), gpus("H100", 0)), figures(cpu("60"), gpus("H100", 0)), false},
		{"a model appears with free GPUs", figures(), figures(gpus("A100", 8, 8, 1)), true},
		{"a model appears with none free", figures(), figures(gpus("A100", 0)), false},
		{"a model is gone", figures(gpus("A100", 8, 8, 1)), figures(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Freed(tc.before, tc.after)); diff != "" {
				t.Errorf("Freed (-want +got):\n%s", diff)
			}
		})
	}
}
