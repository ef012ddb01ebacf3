//go:build integration

package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/flotilla/flotilla/bench/record"
	"github.com/flotilla/flotilla/internal/core/queuesim"
)

// misfitGrace is how long a worker-admitted job's pods may stay unschedulable before the job
// counts as a misfit (the scheduler's first attempts take a moment).
const misfitGrace = 5 * time.Second

// qSampleEvery is the utilization series' step.
const qSampleEvery = time.Second

// phaseResult is one phase's measurements.
type phaseResult struct {
	name string
	jobs int
	// started is the jobs whose pods all ran on the worker that admitted them.
	started int
	// delay is submission to every pod running; jct submission to the last pod's end. A job
	// whose pods did not all run on the admitting worker by the run's end (the last pod's end)
	// is not dropped (that would keep only the survivors): its delay is censored at the run's
	// end, a lower bound, and counted in censored; likewise a job not finished by then in
	// jctCensored.
	delay, jct            []time.Duration
	censored, jctCensored int
	// Where delay goes, per started job: hubWait is submission to the hub's first quota
	// reservation, dispatch from there to a worker's admission (status.clusterName), podStart
	// from there to every pod running.
	hubWait, dispatch, podStart []time.Duration
	makespan                    time.Duration
	// util is the GPU-seconds of running pods over the fleet's GPUs x makespan.
	util float64
	// jain is Jain's index of the teams' GPU-second shares over their weights, over the
	// fairSamples seconds when every team had a job waiting; shares are the teams' parts.
	jain        float64
	fairSamples int
	shares      map[string]float64
	// jainIdeal is the same index of what weighted max-min fairness would give the teams over
	// those seconds, from their demand (queuesim.FairShares of the GPUs per model of the jobs
	// submitted and not finished); jainToIdeal Jain's index of each team's GPU-seconds over that
	// fair allocation's (1: every team got its fair allocation).
	jainIdeal, jainToIdeal float64
	// misfits: jobs a worker admitted whose pods stayed unschedulable longer than misfitGrace;
	// elsewhere: jobs with pods on a worker other than the one that admitted them.
	misfits, elsewhere int
	// evictions counts the hub Workloads' evictions by reason (Preempted: to give another team
	// its share), and evicted the jobs evicted at least once.
	evictions map[string]int
	evicted   int
	writes    float64
	// admitRate is jobs over first submission to last admission on a worker.
	admitRate float64
	series    []qSample
}

// qSample is the fleet's busy GPUs at one time of a phase.
type qSample struct {
	t    time.Duration
	busy int64
}

func measure(ph phase, r *recorder, teams []queuesim.Team, writes float64) *phaseResult {
	res := &phaseResult{name: ph.name, jobs: len(r.jobs), writes: writes, shares: map[string]float64{}, evictions: map[string]int{}}
	var first, lastAdmit, end time.Time
	for _, j := range r.jobs {
		for reason, at := range j.evictions {
			res.evictions[reason] += len(at)
		}
		if len(j.evictions) > 0 {
			res.evicted++
		}
		if first.IsZero() || j.submit.Before(first) {
			first = j.submit
		}
		if j.admitted.After(lastAdmit) {
			lastAdmit = j.admitted
		}
	}
	byJob := map[string][]*qPod{}
	for _, p := range r.pods {
		byJob[p.ns+"/"+p.job] = append(byJob[p.ns+"/"+p.job], p)
		if p.ended.After(end) {
			end = p.ended
		}
	}
	// Per job: start (every pod running on its worker), finish, misfit.
	starts := map[string]time.Time{}
	finishes := map[string]time.Time{}
	for key, j := range r.jobs {
		var start, finish, created time.Time
		running, ended, unsched, other := 0, 0, false, false
		for _, p := range byJob[key] {
			if p.worker != j.worker {
				other = true
				continue
			}
			if created.IsZero() || p.created.Before(created) {
				created = p.created
			}
			unsched = unsched || p.unschedulable
			if !p.running.IsZero() {
				running++
				if p.running.After(start) {
					start = p.running
				}
			}
			if !p.ended.IsZero() {
				ended++
			}
			if p.ended.After(finish) {
				finish = p.ended
			}
		}
		if other {
			res.elsewhere++
		}
		if running < j.trace.Pods {
			res.censored++
			res.jctCensored++
			res.delay = append(res.delay, max(0, end.Sub(j.submit)))
			res.jct = append(res.jct, max(0, end.Sub(j.submit)))
			continue
		}
		res.started++
		starts[key], finishes[key] = start, finish
		res.delay = append(res.delay, start.Sub(j.submit))
		if ended < j.trace.Pods {
			res.jctCensored++
			finish = end
		}
		res.jct = append(res.jct, finish.Sub(j.submit))
		if !j.reserved.IsZero() && !j.admitted.IsZero() {
			res.hubWait = append(res.hubWait, j.reserved.Sub(j.submit))
			res.dispatch = append(res.dispatch, j.admitted.Sub(j.reserved))
			res.podStart = append(res.podStart, start.Sub(j.admitted))
		}
		if unsched && start.Sub(created) > misfitGrace {
			res.misfits++
		}
	}
	if end.IsZero() || first.IsZero() {
		return res
	}
	res.makespan = end.Sub(first)
	res.admitRate = float64(len(r.jobs)) / lastAdmit.Sub(first).Seconds()
	var gpuSec float64
	for _, p := range r.pods {
		if p.running.IsZero() {
			continue
		}
		stop := p.ended
		if stop.IsZero() {
			stop = end
		}
		gpuSec += float64(p.gpus) * stop.Sub(p.running).Seconds()
	}
	res.util = gpuSec / (float64(qWorkers.GPUs()) * res.makespan.Seconds())

	// The series, and each team's GPUs while every team had a job waiting (submitted and not
	// all its pods running), up to the last submission.
	var lastSubmit time.Time
	for _, j := range r.jobs {
		if j.submit.After(lastSubmit) {
			lastSubmit = j.submit
		}
	}
	team := map[string]string{} // namespace -> team
	for _, tm := range teams {
		team[qTeam(tm.Name)] = tm.Name
	}
	acc := map[string]float64{}
	capacity := qWorkers.Capacity()
	weights := make([]float64, len(teams))
	index := map[string]int{}
	for i, tm := range teams {
		weights[i], index[tm.Name] = tm.Weight, i
	}
	fair := make([]float64, len(teams))
	for t := first; !t.After(end); t = t.Add(qSampleEvery) {
		busy := map[string]int64{}
		var all int64
		for _, p := range r.pods {
			if !p.running.IsZero() && !p.running.After(t) && (p.ended.IsZero() || p.ended.After(t)) {
				busy[team[p.ns]] += p.gpus
				all += p.gpus
			}
		}
		res.series = append(res.series, qSample{t: t.Sub(first), busy: all})
		if t.After(lastSubmit) {
			continue
		}
		waiting := map[string]bool{}
		demand := make([]map[string]float64, len(teams))
		for i := range demand {
			demand[i] = map[string]float64{}
		}
		for key, j := range r.jobs {
			if j.submit.After(t) {
				continue
			}
			if s, ok := starts[key]; !ok || s.After(t) {
				waiting[j.trace.Team] = true
			}
			if f, ok := finishes[key]; !ok || f.After(t) {
				demand[index[j.trace.Team]][j.trace.Model] += float64(j.trace.GPUs())
			}
		}
		if len(waiting) < len(teams) {
			continue
		}
		res.fairSamples++
		for tm, g := range busy {
			acc[tm] += float64(g)
		}
		for i, a := range queuesim.FairShares(capacity, demand, weights) {
			fair[i] += a
		}
	}
	res.jain = jainOverWeights(acc, teams, res.shares)
	res.jainIdeal, _ = queuesim.Jain(teams, fair)
	got := make([]float64, len(teams))
	for i, tm := range teams {
		got[i] = acc[tm.Name]
	}
	res.jainToIdeal = queuesim.JainToFair(got, fair)
	return res
}

// jainOverWeights is Jain's index of each team's part of gpuSec over its weight's part of the
// weights (1 when every team has exactly its weighted share), and fills shares with the parts.
func jainOverWeights(gpuSec map[string]float64, teams []queuesim.Team, shares map[string]float64) float64 {
	secs := make([]float64, len(teams))
	for i, tm := range teams {
		secs[i] = gpuSec[tm.Name]
	}
	j, parts := queuesim.Jain(teams, secs)
	for _, p := range parts {
		shares[p.Team] = p.Share
	}
	return j
}

func (r *phaseResult) summary() string {
	return fmt.Sprintf("utilization %.1f%%, queueing delay %s (%d censored at the run's end), makespan %s, Jain %.3f over %d s, misfits %d, writes/job %.0f",
		100*r.util, latencySummary(r.delay), r.censored, r.makespan.Round(100*time.Millisecond), r.jain, r.fairSamples, r.misfits, r.writes/float64(r.jobs))
}

func meanDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s / time.Duration(len(ds))
}

// queueTable is the phases side by side, in markdown.
func queueTable(rs []*phaseResult, jobs []queuesim.Job, compress float64) string {
	var sb strings.Builder
	sb.WriteString("| | " + strings.Join(mapSlice(rs, func(r *phaseResult) string { return r.name }), " | ") + " |\n")
	sb.WriteString("|---" + strings.Repeat("|---", len(rs)) + "|\n")
	row := func(label string, cell func(r *phaseResult) string) {
		sb.WriteString("| " + label + " | " + strings.Join(mapSlice(rs, cell), " | ") + " |\n")
	}
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	row("jobs run (all pods started on the admitting worker)", func(r *phaseResult) string { return fmt.Sprintf("%d of %d", r.started, r.jobs) })
	row("jobs censored at the run's end (delay / JCT; counted at the run's end, a lower bound)", func(r *phaseResult) string {
		return fmt.Sprintf("%d / %d", r.censored, r.jctCensored)
	})
	row("GPU utilization over the makespan", func(r *phaseResult) string { return fmt.Sprintf("%.1f%%", 100*r.util) })
	row("makespan", func(r *phaseResult) string { return sec(r.makespan) })
	row("queueing delay p50 (submit to all pods running)", func(r *phaseResult) string { return pct(r.delay, 50) })
	row("queueing delay tail (p99 from 100 jobs, else the maximum)", func(r *phaseResult) string { return tail(r.delay) })
	row("mean JCT (submit to last pod ended)", func(r *phaseResult) string { return sec(meanDuration(r.jct)) })
	parts := func(ds []time.Duration) string {
		return fmt.Sprintf("%s mean, p50 %s, %s", sec(meanDuration(ds)), pct(ds, 50), tail(ds))
	}
	row("delay, part 1: submit to quota reserved on the hub", func(r *phaseResult) string { return parts(r.hubWait) })
	row("delay, part 2: quota reserved to admitted on a worker", func(r *phaseResult) string { return parts(r.dispatch) })
	row("delay, part 3: admitted on a worker to all pods running", func(r *phaseResult) string { return parts(r.podStart) })
	row("Jain's index, share/weight, while all teams wait", func(r *phaseResult) string {
		return fmt.Sprintf("%.3f (%d s; a %.2f b %.2f c %.2f)", r.jain, r.fairSamples, r.shares["a"], r.shares["b"], r.shares["c"])
	})
	row("the same index of the fair allocation of this phase's demand (weighted max-min per model)", func(r *phaseResult) string {
		return fmt.Sprintf("%.3f", r.jainIdeal)
	})
	row("Jain's index, share/fair allocation, same seconds", func(r *phaseResult) string { return fmt.Sprintf("%.3f", r.jainToIdeal) })
	row("worker-admitted jobs whose pods stayed unschedulable > 5 s", func(r *phaseResult) string { return fmt.Sprint(r.misfits) })
	row("jobs with pods on a second worker", func(r *phaseResult) string { return fmt.Sprint(r.elsewhere) })
	row("jobs evicted on the hub (evictions by reason)", func(r *phaseResult) string { return fmt.Sprintf("%d %v", r.evicted, r.evictions) })
	row("API writes per job (hub + workers)", func(r *phaseResult) string { return fmt.Sprintf("%.0f", r.writes/float64(r.jobs)) })
	row("jobs/s, first submission to last admission on a worker", func(r *phaseResult) string { return fmt.Sprintf("%.2f", r.admitRate) })
	bd := queuesim.Bound(qWorkers, jobs)
	fmt.Fprintf(&sb, "\n%s\n\nNo policy does better on this trace and fleet than: utilization %.1f%%, makespan %.1f s, mean JCT %.1f s (queuesim.Bound, replayed seconds; the control plane's own time not counted).\n",
		traceSummary(jobs, compress), 100*bd.Utilization, bd.Makespan/compress, bd.MeanCompletion/compress)
	return sb.String()
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s (n=%d)", record.Percentile(ds, p).Seconds(), len(ds))
}

// tail is "p99 X s (n=N)" from record.MinP99Samples samples, else "max X s (n=N)".
func tail(ds []time.Duration) string {
	s := record.Summarize(ds)
	if s.N == 0 {
		return "-"
	}
	if s.HasP99() {
		return fmt.Sprintf("p99 %.1f s (n=%d)", s.P99.Seconds(), s.N)
	}
	return fmt.Sprintf("max %.1f s (n=%d)", s.Max.Seconds(), s.N)
}

func mapSlice[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// utilizationCSV is each phase's busy GPUs and utilization every qSampleEvery.
func utilizationCSV(rs []*phaseResult) []byte {
	var sb strings.Builder
	sb.WriteString("phase,seconds,busy_gpus,utilization\n")
	for _, r := range rs {
		for _, s := range r.series {
			fmt.Fprintf(&sb, "%s,%.0f,%d,%.3f\n", r.name, s.t.Seconds(), s.busy, float64(s.busy)/float64(qWorkers.GPUs()))
		}
	}
	return []byte(sb.String())
}

// report reports the phase's figures as benchmark metrics (tagged mk and fl) and adds them to
// the record, MultiKueue's defaults as the peer.
func (r *phaseResult) report(b *testing.B) {
	tag := map[string]string{phaseDefaults.name: "mk", phaseFlotilla.name: "fl"}[r.name]
	side := map[string]record.Side{phaseDefaults.name: record.Peer, phaseFlotilla.name: record.Flotilla}[r.name]
	one := func(value float64, metric string, n int) { reportSide(b, side, tag, metric, value, n) }
	one(float64(r.jobs), "jobs", 1)
	one(100*r.util, "util-%", 1)
	one(r.makespan.Seconds(), "makespan-s", 1)
	if s := record.Summarize(r.delay); s.N > 0 {
		one(s.P50.Seconds(), "delay-p50-s", s.N)
		if s.HasP99() {
			one(s.P99.Seconds(), "delay-p99-s", s.N)
		}
		one(s.Max.Seconds(), "delay-max-s", s.N)
	}
	one(float64(r.censored), "jobs-censored", r.jobs)
	one(meanDuration(r.jct).Seconds(), "jct-mean-s", len(r.jct))
	one(float64(r.jctCensored), "jct-censored", r.jobs)
	if !math.IsNaN(r.jain) && r.fairSamples > 0 { // no second with every team waiting: no index
		one(r.jain, "jain", r.fairSamples)
		one(r.jainToIdeal, "jain-to-fair", r.fairSamples)
	}
	one(float64(r.misfits), "misfits", r.jobs)
	one(float64(r.evicted), "evicted", r.jobs)
	one(r.writes/float64(r.jobs), "writes/job", r.jobs)
}
