package queuesim

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTraceDistribution(t *testing.T) {
	const n = 100_000
	f := LargeFleet()
	c := DefaultTrace(n, 42)
	jobs, err := Generate(f, c)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	var durations []float64
	for i, j := range jobs {
		switch g := j.GPUs(); {
		case g == 1:
			got["1 GPU"]++
		case g <= 4:
			got["2-4 GPUs"]++
		case g == 8:
			got["8 GPUs"]++
		case g >= 16 && g <= 64 && j.PerPod == 8:
			got["16-64 GPUs, pods of 8"]++
		default:
			t.Errorf("job %d: %d pods of %d GPUs, outside the trace's shapes", j.ID, j.Pods, j.PerPod)
		}
		got["team "+j.Team]++
		if j.Model == "" {
			got["any model"]++
		}
		if j.Submit <= c.BurstWindow {
			// c's burst, plus its steady quarter: a third of a's and b's jobs then
			switch j.Team {
			case c.BurstTeam:
				got["team c in the burst window, less its steady quarter"]++
			default:
				got["team c in the burst window, less its steady quarter"] -= 1.0 / 3
			}
		}
		if err := checkJob(f, j); err != nil {
			t.Errorf("job %d cannot run on the fleet: %v", j.ID, err)
		}
		if i > 0 && j.Submit < jobs[i-1].Submit {
			t.Errorf("job %d submitted at %g, before job %d at %g", j.ID, j.Submit, i-1, jobs[i-1].Submit)
		}
		durations = append(durations, j.Duration)
	}
	for k := range got {
		got[k] /= n
	}
	slices.Sort(durations)
	got["median duration / 200 s"] = durations[n/2] / 200
	got["longest duration / 4 h"] = durations[n-1] / (4 * 3600)
	want := map[string]float64{
		"1 GPU": 0.55, "2-4 GPUs": 0.25, "8 GPUs": 0.15, "16-64 GPUs, pods of 8": 0.05,
		// steady arrivals 2:1:1 over 80% of the jobs, and c's burst of 20%
		"team a": 0.4, "team b": 0.2, "team c": 0.4,
		"team c in the burst window, less its steady quarter": 0.2,
		// 20% of the jobs every model could run (pods of up to 4 GPUs: 80% of the jobs)
		"any model":               0.16,
		"median duration / 200 s": 1,
		"longest duration / 4 h":  1,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 0.012)); diff != "" {
		t.Errorf("trace shape (-want +got), tolerance 0.012:\n%s", diff)
	}
	// The steady arrivals offer 1.3 times the fleet's GPU-seconds per second.
	var gs float64
	for _, j := range jobs {
		gs += float64(j.GPUs()) * j.Duration
	}
	steadyEnd := jobs[n-1].Submit
	if load := gs * 0.8 / steadyEnd / float64(f.GPUs()); math.Abs(load-1.3) > 0.05 {
		t.Errorf("offered load %.3f, want 1.3", load)
	}
}

func TestGenerateRefusesBadConfig(t *testing.T) {
	cases := map[string]struct {
		change func(*TraceConfig)
		want   string
	}{
		"no jobs":       {func(c *TraceConfig) { c.Jobs = 0 }, "trace: Jobs is 0: give at least 1"},
		"no load":       {func(c *TraceConfig) { c.Load = 0 }, "trace: Load is 0: give an offered load above 0 (1.3 keeps the fleet backlogged)"},
		"zero weight":   {func(c *TraceConfig) { c.Teams[1].Weight = 0 }, "trace: Teams[1] (b): Weight 0, Share 1: give a weight above 0 and a share at least 0"},
		"unknown burst": {func(c *TraceConfig) { c.BurstTeam = "z" }, `trace: BurstTeam "z" is not one of Teams: name one of them`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := DefaultTrace(10, 1)
			tc.change(&c)
			_, err := Generate(SmallFleet(), c)
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
