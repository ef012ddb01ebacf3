package placementview

import (
	"fmt"

	"k8s.io/utils/clock"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// PlacementsOnly checks that in, decoded from source ("-f FILE"), holds Placements and nothing
// else, as the placements to simulate; fleet names where the other objects belong.
func PlacementsOnly(source, fleet string, in *Objects) error {
	if len(in.Placements) == 0 {
		return fmt.Errorf("%s holds no Placement: give at least one cluster.open-cluster-management.io/v1beta1 Placement", source)
	}
	if n := len(in.Clusters) + len(in.Sets) + len(in.Bindings) + len(in.Scores) + len(in.ResourceUsages) + len(in.Decisions); n > 0 {
		return fmt.Errorf("%s holds %d objects that are not Placements: move them to %s", source, n, fleet)
	}
	return nil
}

// Simulation is the result of scheduling one placement.
type Simulation struct {
	Namespace, Name string
	Result          scheduler.Result
}

// Simulate schedules each of placements on its own against fleet with the hub's scheduling core,
// in order, as the placement controller would. `flotilla placement simulate` and `flotilla mcp`
// both run it.
func Simulate(clk clock.PassiveClock, fleet *Objects, placements []clusterv1beta1.Placement) []Simulation {
	sched := scheduler.New(clk)
	out := make([]Simulation, len(placements))
	for i := range placements {
		p := &placements[i]
		out[i] = Simulation{Namespace: p.Namespace, Name: p.Name, Result: sched.Schedule(p, SnapshotFrom(fleet, p.Namespace, p.Name))}
	}
	return out
}
