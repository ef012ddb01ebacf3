package fleetview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

func TestFiguresOfNodes(t *testing.T) {
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	got := figures(usagev1alpha1.ResourceFigures{Name: "nvidia.com/gpu", Model: "H100", Capacity: q(16), Allocatable: q(16), Requested: q(16), Free: q(4),
		Nodes: []usagev1alpha1.NodeFigures{{Name: "a", Allocatable: q(8), Requested: q(4)}, {Name: "b", Allocatable: q(8), Requested: q(12)}}})
	want := []NodeGPUs{{Name: "a", Allocatable: 8, Requested: 4, Free: 4}, {Name: "b", Allocatable: 8, Requested: 12, Free: 0}}
	if diff := cmp.Diff(want, got.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}
