package queuesim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestBound(t *testing.T) {
	// One H100 node (8 GPUs) and one T4 node (4 GPUs): 12 GPUs.
	fleet := Fleet{{Name: "h", Model: H100, Nodes: 1}, {Name: "t", Model: T4, Nodes: 1}}
	h100 := func(submit, d float64) Job {
		return Job{Submit: submit, Duration: d, Pods: 1, PerPod: 8, Model: H100.Name}
	}
	cases := []struct {
		name string
		jobs []Job
		want Bounds
	}{
		{"one job: its own end", []Job{h100(5, 100)},
			Bounds{Makespan: 105, Utilization: 800.0 / (12 * 105), MeanCompletion: 100, Models: map[string]float64{H100.Name: 100}}},
		{"the busiest model: two 8-GPU jobs on 8 H100 GPUs run one after the other",
			[]Job{h100(0, 100), h100(0, 100)},
			Bounds{Makespan: 200, Utilization: 1600.0 / (12 * 200), MeanCompletion: 100, Models: map[string]float64{H100.Name: 200}}},
		{"the fleet's total: jobs for any model count only there (3,640 GPU-seconds over 12 GPUs)",
			[]Job{{Submit: 0, Duration: 300, Pods: 1, PerPod: 4}, {Submit: 0, Duration: 300, Pods: 1, PerPod: 4}, {Submit: 0, Duration: 300, Pods: 1, PerPod: 4}, {Submit: 10, Duration: 10, Pods: 1, PerPod: 4, Model: T4.Name}},
			Bounds{Makespan: 3640.0 / 12, Utilization: 1, MeanCompletion: 227.5, Models: map[string]float64{T4.Name: 10}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Bound(fleet, c.jobs), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Bound (-want +got):\n%s", diff)
			}
		})
	}
}

// No policy beats the bounds: every variant's schedule of the default trace is at least as long,
// at most as busy and at least as slow on average.
func TestSchedulesRespectTheBound(t *testing.T) {
	f := Fleet{{Name: "h", Model: H100, Nodes: 2}, {Name: "a", Model: A100, Nodes: 2}, {Name: "t", Model: T4, Nodes: 2}}
	for seed := uint64(1); seed <= 4; seed++ {
		c := DefaultTrace(200, seed)
		jobs, err := Generate(f, c)
		if err != nil {
			t.Fatal(err)
		}
		b := Bound(f, jobs)
		for _, o := range []Options{{Policy: MultiKueueDefaults}, {Policy: Flotilla}, {Policy: Flotilla, NodeAware: true}, {Policy: Flotilla, Reserve: 600}} {
			o.Teams = c.Teams
			res, err := Run(f, jobs, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Makespan < b.Makespan || res.Utilization > b.Utilization+1e-9 || res.MeanCompletion < b.MeanCompletion {
				t.Errorf("seed %d, %+v: makespan %g, utilization %g, mean JCT %g beat the bound %+v", seed, o, res.Makespan, res.Utilization, res.MeanCompletion, b)
			}
		}
	}
}

// Options.Reserve: a 16-GPU gang waits for a worker's whole quota while 1-GPU jobs keep coming.
// Without a reservation the small jobs pass it (BestEffortFIFO) and it starts only when they stop;
// with one, after waiting Reserve seconds it keeps later jobs out and starts once the running
// ones end.
func TestReserveStopsAGangStarving(t *testing.T) {
	fleet := Fleet{{Name: "h", Model: H100, Nodes: 2}}
	jobs := []Job{{ID: 0, Team: "a", Submit: 0, Duration: 100, Pods: 1, PerPod: 1, Model: H100.Name},
		{ID: 1, Team: "a", Submit: 1, Duration: 10, Pods: 2, PerPod: 8, Model: H100.Name}}
	for i := 2; i < 12; i++ { // a 1-GPU job every 50 s, each running 100 s: one is always running
		jobs = append(jobs, Job{ID: i, Team: "a", Submit: float64(50 * (i - 1)), Duration: 100, Pods: 1, PerPod: 1, Model: H100.Name})
	}
	starts := map[float64]float64{}
	for _, reserve := range []float64{0, 30} {
		res, err := Run(fleet, jobs, Options{Policy: Flotilla, Teams: oneTeam, Reserve: reserve})
		if err != nil {
			t.Fatal(err)
		}
		starts[reserve] = res.Records[1].Start
	}
	// Without: after the last small job (submitted at 500) ends at 600. With: once job 0 ends at
	// 100 (job 2, submitted at 50 after the gang had waited 30 s, is kept out).
	if diff := cmp.Diff(map[float64]float64{0: 600, 30: 100}, starts); diff != "" {
		t.Errorf("the gang's start by Reserve (-want +got):\n%s", diff)
	}
}

// Options.NodeAware: two 8-GPU H100 nodes, one running a 4-GPU job until 100. A gang of two
// 5-GPU pods fits the hub's quota (12 of 16 left) but not the nodes (one has 4 free). Without
// NodeAware the hub admits the gang, which holds 10 of the quota while it waits for the nodes,
// so the 4-GPU job submitted after it gets no quota until the gang starts at 100, and then no
// node until the gang ends at 110. With NodeAware the gang stays queued on the hub and the
// 4-GPU job starts at once.
func TestNodeAwareAdmission(t *testing.T) {
	fleet := Fleet{{Name: "h", Model: H100, Nodes: 2}}
	jobs := []Job{
		{ID: 0, Team: "a", Submit: 0, Duration: 100, Pods: 1, PerPod: 4, Model: H100.Name},
		{ID: 1, Team: "a", Submit: 1, Duration: 10, Pods: 2, PerPod: 5, Model: H100.Name},
		{ID: 2, Team: "a", Submit: 2, Duration: 10, Pods: 1, PerPod: 4, Model: H100.Name},
	}
	got := map[bool][2]float64{}
	for _, aware := range []bool{false, true} {
		res, err := Run(fleet, jobs, Options{Policy: Flotilla, Teams: oneTeam, NodeAware: aware})
		if err != nil {
			t.Fatal(err)
		}
		got[aware] = [2]float64{res.Records[1].Start, res.Records[2].Start}
	}
	want := map[bool][2]float64{false: {100, 110}, true: {100, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("starts of the gang and the 4-GPU job, by NodeAware (-want +got):\n%s", diff)
	}
}
