//go:build integration

package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/core/queuesim"
)

// TestMeasureCountsCensoredJobs: a job whose pods never all ran on the worker that admitted it
// is counted in delay and JCT at the run's end (censored), not dropped; a job that started and
// did not finish is censored in JCT only. Needs no fleet.
func TestMeasureCountsCensoredJobs(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	teams := []queuesim.Team{{Name: "a", Weight: 1}}
	job := func(name, worker string, submit int) *qJob {
		return &qJob{name: name, ns: qTeam("a"), submit: at(submit), worker: worker,
			trace: queuesim.Job{Team: "a", Pods: 1, PerPod: 1, Model: "H100"}}
	}
	pod := func(job, worker string, created, running, ended int) *qPod {
		p := &qPod{job: job, ns: qTeam("a"), worker: worker, gpus: 1, created: at(created)}
		if running >= 0 {
			p.running = at(running)
		}
		if ended >= 0 {
			p.ended = at(ended)
		}
		return p
	}
	r := &recorder{
		jobs: map[string]*qJob{
			qTeam("a") + "/done":    job("done", "w1", 0),    // ran 10 s to 40 s
			qTeam("a") + "/running": job("running", "w1", 0), // started at 20 s, still running
			qTeam("a") + "/never":   job("never", "w1", 30),  // its pod never ran
			qTeam("a") + "/moved":   job("moved", "w1", 40),  // its pod ran on another worker
		},
		pods: map[string]*qPod{
			"w1/done":    pod("done", "w1", 1, 10, 40),
			"w1/running": pod("running", "w1", 1, 20, -1),
			"w1/never":   pod("never", "w1", 31, -1, -1),
			"w2/moved":   pod("moved", "w2", 41, 45, 100), // the run's end: the last pod's end
		},
	}
	res := measure(phaseDefaults, r, teams, 0)
	type got struct {
		Started, Censored, JCTCensored int
		Delay, JCT                     []time.Duration
	}
	sorted := func(ds []time.Duration) []time.Duration {
		out := slices.Clone(ds)
		slices.Sort(out)
		return out
	}
	want := got{Started: 2, Censored: 2, JCTCensored: 3,
		// done 10 s, running 20 s; never censored at 100 - 30, moved at 100 - 40.
		Delay: []time.Duration{10 * time.Second, 20 * time.Second, 60 * time.Second, 70 * time.Second},
		// done 40 s; running, never, moved censored at the end: 100, 70, 60.
		JCT: []time.Duration{40 * time.Second, 60 * time.Second, 70 * time.Second, 100 * time.Second}}
	if diff := cmp.Diff(want, got{res.started, res.censored, res.jctCensored, sorted(res.delay), sorted(res.jct)}); diff != "" {
		t.Errorf("measure (-want +got):\n%s", diff)
	}
}
