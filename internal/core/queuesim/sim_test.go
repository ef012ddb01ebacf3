package queuesim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

var oneTeam = []Team{{Name: "a", Weight: 1, Share: 1}}

// TestFragmentedWorker: w1 has 16 H100 GPUs on two nodes, left with 4 and 2 free; a gang of two
// 3-GPU pods fits w1's quota (6 of 16 left) but not its nodes. MultiKueue's defaults admit it
// on w1, where it waits for a job to finish; Flotilla's dispatcher judges w1 NoFit and offers it
// to w2, whose node is free.
func TestFragmentedWorker(t *testing.T) {
	fleet := Fleet{{Name: "w1", Model: H100, Nodes: 2}, {Name: "w2", Model: H100, Nodes: 1}}
	jobs := []Job{
		{ID: 0, Team: "a", Submit: 0, Duration: 100, Pods: 1, PerPod: 4, Model: H100.Name},
		{ID: 1, Team: "a", Submit: 0, Duration: 100, Pods: 1, PerPod: 6, Model: H100.Name},
		{ID: 2, Team: "a", Submit: 1, Duration: 10, Pods: 2, PerPod: 3, Model: H100.Name},
	}
	type gang struct {
		Worker        string
		Start, Finish float64
		Misfit        bool
		Misfits       int
	}
	cases := map[Policy]gang{
		MultiKueueDefaults: {Worker: "w1", Start: 100, Finish: 110, Misfit: true, Misfits: 1},
		Flotilla:           {Worker: "w2", Start: 1, Finish: 11},
	}
	for policy, want := range cases {
		t.Run(string(policy), func(t *testing.T) {
			res, err := Run(fleet, jobs, Options{Policy: policy, Teams: oneTeam})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Records[2]
			got := gang{Worker: r.Worker, Start: r.Start, Finish: r.Finish, Misfit: r.Misfit, Misfits: res.Misfits}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the gang (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFairSharingOrder: one 8-GPU node; team c submits 8 one-GPU jobs, then a (weight 2) and b
// 8 each. FIFO starts c's eight. Fair sharing admits the team holding the least per unit of
// weight first (ties: the earliest job): c, a, b, a, c, a, b, a.
func TestFairSharingOrder(t *testing.T) {
	fleet := Fleet{{Name: "w", Model: H100, Nodes: 1}}
	teams := []Team{{Name: "a", Weight: 2}, {Name: "b", Weight: 1}, {Name: "c", Weight: 1}}
	var jobs []Job
	for i, team := range []string{"c", "a", "b"} {
		for k := range 8 {
			jobs = append(jobs, Job{ID: i*8 + k, Team: team, Duration: 100, Pods: 1, PerPod: 1, Model: H100.Name})
		}
	}
	cases := map[Policy][]int{
		MultiKueueDefaults: {0, 1, 2, 3, 4, 5, 6, 7},
		Flotilla:           {0, 1, 8, 9, 10, 11, 16, 17},
	}
	for policy, want := range cases {
		t.Run(string(policy), func(t *testing.T) {
			res, err := Run(fleet, jobs, Options{Policy: policy, Teams: teams})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, r := range res.Records {
				if r.Start == 0 {
					got = append(got, r.ID)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("jobs started first (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	f := SmallFleet()
	c := DefaultTrace(1500, 7)
	first, err := Generate(f, c)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Generate(f, c)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Fatalf("the same seed gave another trace (-first +again):\n%s", diff)
	}
	c.Seed = 8
	other, _ := Generate(f, c)
	if cmp.Equal(first, other) {
		t.Fatalf("seeds 7 and 8 gave the same trace")
	}
	for _, o := range []Options{{Policy: MultiKueueDefaults}, {Policy: Flotilla}, {Policy: Flotilla, Rank: RankMostFree}} {
		o.Teams = c.Teams
		a, err := Run(f, first, o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Run(f, first, o)
		if diff := cmp.Diff(a, b, cmpopts.IgnoreFields(Result{}, "Timing")); diff != "" {
			t.Errorf("%s %s: two runs differ (-first +second):\n%s", o.Policy, o.Rank, diff)
		}
	}
}

// TestDefaultTraceRuns checks what must hold of any run: every job starts after it is submitted
// and runs its duration, utilization is within (0, 1], Flotilla never admits a job on a worker
// its pods do not fit, and on the default trace MultiKueue's defaults do.
func TestDefaultTraceRuns(t *testing.T) {
	f := Fleet{{Name: "h1", Model: H100, Nodes: 4}, {Name: "h2", Model: H100, Nodes: 4}, {Name: "a1", Model: A100, Nodes: 4}, {Name: "t1", Model: T4, Nodes: 4}}
	c := DefaultTrace(2000, 3)
	jobs, err := Generate(f, c)
	if err != nil {
		t.Fatal(err)
	}
	misfits := map[string]bool{}
	for _, o := range []Options{{Policy: MultiKueueDefaults}, {Policy: Flotilla}, {Policy: Flotilla, Rank: RankMostFree}} {
		o.Teams = c.Teams
		res, err := Run(f, jobs, o)
		if err != nil {
			t.Fatal(err)
		}
		name := string(res.Policy) + "/" + string(res.Rank)
		for i, r := range res.Records {
			if r.Start < r.Submit || r.Finish != r.Start+jobs[i].Duration || r.Finish > res.Makespan {
				t.Errorf("%s: job %d submitted %g, started %g, finished %g, runs %g, makespan %g", name, r.ID, r.Submit, r.Start, r.Finish, jobs[i].Duration, res.Makespan)
			}
		}
		if res.Utilization <= 0 || res.Utilization > 1 || res.Fairness <= 0 || res.Fairness > 1 || res.Timing.Decisions == 0 {
			t.Errorf("%s: utilization %g, fairness %g, decisions %d", name, res.Utilization, res.Fairness, res.Timing.Decisions)
		}
		misfits[name] = res.Misfits > 0
	}
	want := map[string]bool{"multikueue-defaults/": true, "flotilla/fixed": false, "flotilla/most-free": false}
	if diff := cmp.Diff(want, misfits); diff != "" {
		t.Errorf("runs with jobs admitted on a worker where their pods could not all start (-want +got):\n%s", diff)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	job := Job{ID: 4, Team: "a", Duration: 10, Pods: 1, PerPod: 1, Model: T4.Name}
	cases := map[string]struct {
		fleet Fleet
		jobs  func(Job) []Job
		want  string
	}{
		"pods larger than the model's nodes": {SmallFleet(), func(j Job) []Job { j.PerPod = 8; return []Job{j} },
			`job 4: 1 pods of 8 GPUs (Model "Tesla-T4"): no worker of Tesla-T4 holds them: make the job smaller or ask for another model`},
		"any model, which T4 nodes cannot hold": {SmallFleet(), func(j Job) []Job { j.PerPod, j.Model = 8, ""; return []Job{j} },
			`job 4: 1 pods of 8 GPUs (Model ""): no worker of Tesla-T4 holds them: make the job smaller or ask for another model`},
		"unknown team": {SmallFleet(), func(j Job) []Job { j.Team = "z"; return []Job{j} },
			`job 4: Team "z" is not in Options.Teams: add it`},
		"unsorted": {SmallFleet(), func(j Job) []Job { k := j; k.ID, k.Submit = 5, -1; return []Job{j, k} },
			"job 5: Submit -1 is before the previous job's 0: sort the jobs by Submit"},
		"no workers": {nil, func(j Job) []Job { return []Job{j} }, "fleet has no workers: give at least one WorkerSpec"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Run(tc.fleet, tc.jobs(job), Options{Policy: Flotilla, Teams: oneTeam})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFigures: the worker's figures are the add-on's cumulative FreeNodes distribution.
func TestFigures(t *testing.T) {
	w := newWorker(WorkerSpec{Name: "w", Model: H100, Nodes: 5})
	copy(w.free, []int{8, 4, 4, 0, 2})
	w.dirty = true
	f := w.figures(epoch).Status.Figures(usagev1alpha1.ResourceNvidiaGPU, H100.Name)
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	want := []usagev1alpha1.NodesWithFree{{Free: q(8), Nodes: 1}, {Free: q(4), Nodes: 3}, {Free: q(2), Nodes: 4}}
	if diff := cmp.Diff(want, f.FreeNodes, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("FreeNodes (-want +got):\n%s", diff)
	}
	if f.Free.Value() != 18 || f.Requested.Value() != 22 {
		t.Errorf("free %s, requested %s; want 18 and 22", f.Free.String(), f.Requested.String())
	}
}
