package resourceusage

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// TestUpdateMaxima: the first call reads the fleet; later calls change one cluster's share; every
// cluster is queued again exactly when the fleet's maxima move.
func TestUpdateMaxima(t *testing.T) {
	big, small := gpuUsage("big", 8, 8, nil), gpuUsage("small", 2, 4, nil)
	objs := append(acceptedClusters("big", "small"), &big, &small)
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	r := &Reconciler{Client: c, all: make(chan event.GenericEvent, 16)}
	ctx := context.Background()
	gpu := func(m Maxima) [2]float64 { return [2]float64{m.Cluster[2], m.Node[2]} }
	queued := func() int {
		n := 0
		for len(r.all) > 0 {
			<-r.all
			n++
		}
		return n
	}

	steps := []struct {
		name       string
		cluster    string
		usage      *usagev1alpha1.ResourceUsage
		wantGPU    [2]float64
		wantQueued int
	}{
		{"first: the fleet is read, the maxima move from nothing", "small", &small, [2]float64{64, 8}, 2},
		{"a change below the maxima queues nobody", "small", ptr.To(gpuUsage("small", 3, 4, nil)), [2]float64{64, 8}, 0},
		{"a new largest cluster moves the maxima", "huge", ptr.To(gpuUsage("huge", 16, 8, nil)), [2]float64{128, 8}, 3},
		{"it goes: back to the fleet without it", "huge", nil, [2]float64{64, 8}, 2},
	}
	for _, s := range steps {
		m, err := r.updateMaxima(ctx, s.cluster, s.usage)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if diff := cmp.Diff(s.wantGPU, gpu(m)); diff != "" {
			t.Errorf("%s: GPU maxima (cluster, node) (-want +got):\n%s", s.name, diff)
		}
		if got := queued(); got != s.wantQueued {
			t.Errorf("%s: %d clusters queued again, want %d", s.name, got, s.wantQueued)
		}
	}
}
