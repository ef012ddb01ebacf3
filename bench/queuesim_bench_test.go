package bench

// The queueing simulation (internal/core/queuesim): one synthetic trace through MultiKueue's defaults
// and Flotilla's fair sharing and dispatcher, on a small and a large simulated fleet. Pure Go, no
// fleet: not build-tagged, and it runs only with -bench (`make bench-queue-sim`).

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flotilla/flotilla/bench/record"
	"github.com/flotilla/flotilla/internal/core/queuesim"
)

const (
	// queueSimJobsEnv overrides the small fleet's jobs (default 3,000).
	queueSimJobsEnv = "FLOTILLA_BENCH_QUEUE_JOBS"
	// queueSimLargeJobsEnv overrides the large fleet's jobs (default 50,000).
	queueSimLargeJobsEnv = "FLOTILLA_BENCH_QUEUE_LARGE_JOBS"
	// queueSimOutEnv is where the utilization series (CSV, SVG) go; a temporary folder when unset.
	queueSimOutEnv = "FLOTILLA_BENCH_QUEUE_OUT"
	queueSimSeed   = 1
)

// queueSimVariant is one column of the table.
type queueSimVariant struct {
	name string
	o    queuesim.Options
}

var queueSimVariants = []queueSimVariant{
	{"(a) MultiKueue defaults", queuesim.Options{Policy: queuesim.MultiKueueDefaults}},
	{"(b) Flotilla dispatch, FIFO admission", queuesim.Options{Policy: queuesim.Flotilla, FIFO: true}},
	{"(b) Flotilla, fixed rank", queuesim.Options{Policy: queuesim.Flotilla}},
	{"(b) Flotilla, most-free rank", queuesim.Options{Policy: queuesim.Flotilla, Rank: queuesim.RankMostFree}},
}

func BenchmarkQueueSim(b *testing.B) {
	startRecord(b, "bench-queue-sim")
	out := os.Getenv(queueSimOutEnv)
	if out == "" {
		out = filepath.Join(os.TempDir(), "flotilla-queuesim")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		b.Fatal(err)
	}
	fleets := []struct {
		name  string
		fleet queuesim.Fleet
		jobs  int
		// atOnce submits every job at time 0: the whole trace queued on the hub at once.
		atOnce bool
	}{
		{"small", queuesim.SmallFleet(), queueSimJobs(b, queueSimJobsEnv, 3000), false},
		{"large", queuesim.LargeFleet(), queueSimJobs(b, queueSimLargeJobsEnv, 50_000), false},
		{"large-all-at-once", queuesim.LargeFleet(), queueSimJobs(b, queueSimLargeJobsEnv, 50_000), true},
	}
	b.Run("bench-queue-fleet-seeds", benchQueueSimSeeds)
	for _, fl := range fleets {
		b.Run(fl.name, func(b *testing.B) {
			c := queuesim.DefaultTrace(fl.jobs, queueSimSeed)
			jobs, err := queuesim.Generate(fl.fleet, c)
			if err != nil {
				b.Fatal(err)
			}
			if fl.atOnce {
				for i := range jobs {
					jobs[i].Submit = 0
				}
			}
			var results []*queuesim.Result
			for range b.N {
				results = results[:0]
				for _, v := range queueSimVariants {
					o := v.o
					o.Teams = c.Teams
					res, err := queuesim.Run(fl.fleet, jobs, o)
					if err != nil {
						b.Fatalf("%s: %v", v.name, err)
					}
					results = append(results, res)
				}
			}
			fmt.Printf("\n### %s fleet: %d workers, %d GPUs, %d jobs (seed %d), %s\n\n", fl.name, len(fl.fleet), fl.fleet.GPUs(), len(jobs), queueSimSeed, time.Now().UTC().Format("2006-01-02"))
			fmt.Print(queueSimTable(results))
			bd := queuesim.Bound(fl.fleet, jobs)
			fmt.Printf("\nNo policy does better on this trace and fleet than: utilization %.1f%%, makespan %.2f h, mean JCT %s (queuesim.Bound).\n",
				100*bd.Utilization, bd.Makespan/3600, (time.Duration(bd.MeanCompletion) * time.Second).String())
			base := filepath.Join(out, "queuesim-"+fl.name)
			if err := os.WriteFile(base+".csv", []byte(queueSimCSV(results)), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(base+".svg", []byte(queueSimSVG(fl.name, results)), 0o644); err != nil {
				b.Fatal(err)
			}
			fmt.Printf("\nutilization series: %s.csv, %s.svg\n", base, base)
			for i, res := range results {
				key := []string{"a", "b-fifo", "b-fixed", "b-mostfree"}[i]
				report(b, res.Utilization, key+"-utilization")
				report(b, res.Timing.PerSecond, key+"-decisions/s")
				if res.Timing.Decisions >= queuesim.MinP99Samples {
					reportN(b, record.Flotilla, float64(res.Timing.P99)/float64(time.Millisecond), key+"-ms-decision-p99", res.Timing.Decisions)
				} else {
					reportN(b, record.Flotilla, float64(res.Timing.Max)/float64(time.Millisecond), key+"-ms-decision-max", res.Timing.Decisions)
				}
			}
		})
	}
}

func queueSimJobs(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" && smoke() {
		return min(def, 300)
	}
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: give a number of jobs above 0", name, v)
	}
	return n
}

// queueSimTable is a markdown table: one row per metric, one column per variant.
func queueSimTable(rs []*queuesim.Result) string {
	var sb strings.Builder
	row := func(metric string, f func(r *queuesim.Result) string) {
		sb.WriteString("| " + metric + " |")
		for _, r := range rs {
			sb.WriteString(" " + f(r) + " |")
		}
		sb.WriteString("\n")
	}
	sb.WriteString("| metric |")
	for _, v := range queueSimVariants {
		sb.WriteString(" " + v.name + " |")
	}
	sb.WriteString("\n|---|" + strings.Repeat("---|", len(rs)) + "\n")
	dur := func(s float64) string { return (time.Duration(s) * time.Second).String() }
	row("GPU utilization over the run", func(r *queuesim.Result) string { return fmt.Sprintf("%.1f%%", 100*r.Utilization) })
	row("GPU utilization while jobs arrive (mean of samples)", func(r *queuesim.Result) string {
		if r.ArrivingSamples == 0 {
			return "n/a (all submitted at once)"
		}
		return fmt.Sprintf("%.1f%%", 100*r.UtilizationArriving)
	})
	row("makespan", func(r *queuesim.Result) string { return fmt.Sprintf("%.2f h", r.Makespan/3600) })
	row("queueing delay p50 / tail (all jobs; p99 from 100 jobs, else the maximum)", func(r *queuesim.Result) string {
		if !r.QueueDelay.HasP99() {
			return fmt.Sprintf("%s / max %s (n=%d)", dur(r.QueueDelay.P50), dur(r.QueueDelay.Max), r.QueueDelay.N)
		}
		return fmt.Sprintf("%s / p99 %s (n=%d)", dur(r.QueueDelay.P50), dur(r.QueueDelay.P99), r.QueueDelay.N)
	})
	row("mean job completion time", func(r *queuesim.Result) string { return dur(r.MeanCompletion) })
	row("Jain's index, share/weight (window samples)", func(r *queuesim.Result) string {
		if r.FairnessSamples == 0 {
			return "n/a (no window)"
		}
		return fmt.Sprintf("%.3f (%d)", r.Fairness, r.FairnessSamples)
	})
	row("the same index of the fair allocation of the run's demand (weighted max-min per model)", func(r *queuesim.Result) string {
		if r.FairnessSamples == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.3f", r.FairnessIdeal)
	})
	row("Jain's index, share/fair allocation", func(r *queuesim.Result) string {
		if r.FairnessSamples == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.3f", r.FairnessToIdeal)
	})
	row("GPU-seconds share a:b:c in the window (fair 50:25:25)", func(r *queuesim.Result) string {
		if r.FairnessSamples == 0 {
			return "n/a"
		}
		var p []string
		for _, t := range r.Teams {
			p = append(p, fmt.Sprintf("%.0f", 100*t.Share))
		}
		return strings.Join(p, ":")
	})
	row("admitted on a worker where pods could not all start", func(r *queuesim.Result) string {
		if r.Misfits == 0 {
			return "0"
		}
		return fmt.Sprintf("%d (wait mean %s, max %s; %.0f GPU-h of quota held idle)", r.Misfits, dur(r.MisfitWait.Mean), dur(r.MisfitWait.Max), r.MisfitIdleGPUSeconds/3600)
	})
	row("most jobs waiting on the hub", func(r *queuesim.Result) string { return strconv.Itoa(r.PeakWaiting) })
	row("dispatch decisions", func(r *queuesim.Result) string { return strconv.Itoa(r.Timing.Decisions) })
	row("decisions/s (wall clock of the decision function)", func(r *queuesim.Result) string { return fmt.Sprintf("%.0f", r.Timing.PerSecond) })
	row("decision latency p50 / p99 / max (p99 from 100 decisions)", func(r *queuesim.Result) string {
		p99 := "-"
		if r.Timing.Decisions >= queuesim.MinP99Samples {
			p99 = r.Timing.P99.String()
		}
		return fmt.Sprintf("%s / %s / %s (n=%d)", r.Timing.P50, p99, r.Timing.Max, r.Timing.Decisions)
	})
	row("simulation wall time", func(r *queuesim.Result) string { return r.Timing.Run.Round(time.Millisecond).String() })
	return sb.String()
}

// queueSimCSV is the utilization series of every variant: variant,t_s,busy_gpus,utilization.
func queueSimCSV(rs []*queuesim.Result) string {
	var sb strings.Builder
	sb.WriteString("variant,t_s,busy_gpus,utilization\n")
	for i, r := range rs {
		for _, s := range r.Series {
			fmt.Fprintf(&sb, "%q,%.0f,%d,%.4f\n", queueSimVariants[i].name, s.T, s.Busy, s.Utilization)
		}
	}
	return sb.String()
}

// queueSimSVG plots the variants' utilization over time, one line each.
func queueSimSVG(title string, rs []*queuesim.Result) string {
	const w, h, left, bottom, top, right = 900.0, 360.0, 50.0, 30.0, 30.0, 260.0
	var end float64
	for _, r := range rs {
		end = max(end, r.Makespan)
	}
	x := func(t float64) float64 { return left + (w-left-right)*t/end }
	y := func(u float64) float64 { return top + (h-top-bottom)*(1-u) }
	colors := []string{"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="18">GPU utilization, %s fleet (simulated)</text>`+"\n", left, title)
	for _, u := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&sb, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="8" y="%.1f">%.0f%%</text>`+"\n", left, w-right, y(u), y(u), y(u)+4, 100*u)
	}
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f">0 h</text><text x="%.0f" y="%.0f" text-anchor="end">%.1f h</text>`+"\n", left, h-8, w-right, h-8, end/3600)
	for i, r := range rs {
		var pts []string
		for _, s := range r.Series {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.T), y(s.Utilization)))
		}
		c := colors[i%len(colors)]
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		fmt.Fprintf(&sb, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			w-right+10, w-right+30, top+20*float64(i), top+20*float64(i), c, w-right+35, top+20*float64(i)+4, queueSimVariants[i].name)
	}
	sb.WriteString("</svg>\n")
	return sb.String()
}
