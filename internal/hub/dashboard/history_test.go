package dashboard

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

func TestRecordKeepsTheLastSamples(t *testing.T) {
	at := func(s int) historySample { return historySample{at: t0.Add(time.Duration(s) * time.Second)} }
	var ring []historySample
	for s := range 5 {
		ring = record(ring, at(s), 3)
	}
	if diff := cmp.Diff([]historySample{at(2), at(3), at(4)}, ring, cmp.AllowUnexported(historySample{})); diff != "" {
		t.Errorf("ring after 5 samples with room for 3 (-want +got):\n%s", diff)
	}
}

func TestTopModels(t *testing.T) {
	var models []fleetview.ModelTotal
	for i := range maxHistoryModels + 2 {
		models = append(models, fleetview.ModelTotal{Model: string(rune('a' + i)), Allocatable: int64(i)})
	}
	got := topModels(models)
	if len(got) != maxHistoryModels || got[0].Allocatable != int64(maxHistoryModels+1) || got[len(got)-1].Allocatable != 2 {
		t.Errorf("topModels kept %d models from %d to %d allocatable, want the %d largest", len(got), got[0].Allocatable, got[len(got)-1].Allocatable, maxHistoryModels)
	}
}

func gpuCluster(name, model string, n int) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1.ManagedClusterStatus{ClusterClaims: []clusterv1.ManagedClusterClaim{
		{Name: clusterv1.GPUModelsClaim, Value: model}, {Name: clusterv1.GPUCountClaimName(model), Value: resource.NewQuantity(int64(n), resource.DecimalSI).String()}}}}
}

func gpuUsage(cluster, model string, alloc, free int64, validUntil time.Time) *usagev1alpha1.ResourceUsage {
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	return &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName},
		Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: &metav1.Time{Time: t0}, ValidUntil: &metav1.Time{Time: validUntil}, Nodes: 2, Resources: []usagev1alpha1.ResourceFigures{
			{Name: usagev1alpha1.ResourceNvidiaGPU, Model: model, Capacity: q(alloc), Allocatable: q(alloc), Requested: q(alloc - free), Free: q(free)}}}}
}

func TestHistorySamplesTheFleetEveryInterval(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	const h100, a100 = "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"
	u := gpuUsage("east", h100, 16, 8, t0.Add(time.Hour))
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(gpuCluster("east", h100, 16), gpuCluster("west", a100, 8), u).
		WithStatusSubresource(u).Build()
	h := NewHistory(c, clk, time.Minute, 3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Start(ctx) }()
	// sampled waits for the sample at m minutes, with the sampler waiting for the next tick.
	sampled := func(m time.Duration) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			h.mu.Lock()
			last := time.Time{}
			if len(h.ring) > 0 {
				last = h.ring[len(h.ring)-1].at
			}
			h.mu.Unlock()
			if last.Equal(t0.Add(m*time.Minute)) && clk.HasWaiters() {
				return
			}
		}
		t.Fatalf("the history did not sample at %d minutes", m)
	}
	sampled(0)
	u.Status.Resources[0].Requested, u.Status.Resources[0].Free = resource.MustParse("12"), resource.MustParse("4")
	if err := c.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Minute)
	sampled(1)
	// The east cluster's figures expire: its GPUs still count as allocatable, not as free.
	clk.Step(time.Hour)
	sampled(61)
	// The west cluster leaves: its model is absent from the sample, drawn as zero.
	if err := c.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "west"}}); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Minute)
	sampled(62)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	at := func(m time.Duration) time.Time { return t0.Add(m * time.Minute).UTC() }
	want := []GPUSeries{
		{Model: a100, Points: []GPUPoint{{Time: at(1), Allocatable: 8}, {Time: at(61), Allocatable: 8}, {Time: at(62)}}},
		{Model: h100, Points: []GPUPoint{{Time: at(1), Allocatable: 16, Free: 4}, {Time: at(61), Allocatable: 16}, {Time: at(62), Allocatable: 16}}},
	}
	if diff := cmp.Diff(want, h.Series()); diff != "" {
		t.Errorf("series after 4 samples with room for 3 (-want +got):\n%s", diff)
	}
}

func TestQueueSeries(t *testing.T) {
	views := []fleetview.QueueView{{Name: "fleet", Teams: []fleetview.TeamView{
		{Name: "a", Used: map[string]int64{"H100": 12}, Fair: map[string]float64{"H100": 8, fleetview.AnyModel: 2}},
		{Name: "b", Used: map[string]int64{}, Fair: map[string]float64{"H100": 8}},
	}}, {Name: "other", Teams: []fleetview.TeamView{{Name: "a", Used: map[string]int64{"A100": 1}}}}}
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	ring := []historySample{{at: at(0)}, {at: at(1), shares: shares(views)}}
	want := []ShareSeries{
		{Team: "a", Model: fleetview.AnyModel, Points: []SharePoint{{Time: at(0)}, {Time: at(1), Fair: 2}}},
		{Team: "a", Model: "H100", Points: []SharePoint{{Time: at(0)}, {Time: at(1), Used: 12, Fair: 8}}},
		{Team: "b", Model: "H100", Points: []SharePoint{{Time: at(0)}, {Time: at(1), Fair: 8}}},
	}
	if diff := cmp.Diff(want, queueSeries(ring, "fleet")); diff != "" {
		t.Errorf("queueSeries of fleet, which had no teams at the first sample (-want +got):\n%s", diff)
	}
	if got := queueSeries(ring, "none"); len(got) != 0 {
		t.Errorf("queueSeries of a FleetQueue never sampled = %+v, want none", got)
	}
	var many []fleetview.TeamView
	for i := range maxHistoryShares + 5 {
		many = append(many, fleetview.TeamView{Name: fmt.Sprint(i), Used: map[string]int64{"H100": 1}})
	}
	if got := len(shares([]fleetview.QueueView{{Name: "big", Teams: many}})); got != maxHistoryShares {
		t.Errorf("a sample of %d teams keeps %d figures, want the bound %d", len(many), got, maxHistoryShares)
	}
}
