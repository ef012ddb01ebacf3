package queuesim

import (
	"slices"
	"time"
)

// Result is what one run measured. Times are simulated seconds, except Timing's.
type Result struct {
	Policy Policy
	Rank   Rank // Flotilla's worker order
	FIFO   bool // Flotilla admitting in FIFO order, not by fair sharing
	Jobs   int
	GPUs   int
	// Makespan is from time 0 to the last job's finish.
	Makespan float64
	// Utilization is the GPU-seconds busy over GPUs x Makespan.
	Utilization float64
	// UtilizationArriving is the mean sampled utilization up to the last submission, while the
	// trace still offers work (the run's end is the long jobs' drain).
	UtilizationArriving float64
	ArrivingSamples     int
	// QueueDelay is start - submit over every job.
	QueueDelay Stats
	// MeanCompletion is the mean of finish - submit.
	MeanCompletion float64
	// Fairness is Jain's index of the teams' GPU-seconds per unit of weight, over the samples
	// up to the last submission when every team had jobs submitted and not started
	// (FairnessSamples of them); 1 is each team getting exactly its weight's share. Teams holds
	// the shares.
	Fairness        float64
	FairnessSamples int
	Teams           []TeamShare
	// FairnessIdeal is the same index of the GPU-seconds FairShares gives the teams over the same
	// samples, from the demand this run had: what a perfectly fair scheduler that leaves no GPU
	// idle would score on it. A team that asks little scores below its weight there too.
	FairnessIdeal float64
	// FairnessToIdeal is Jain's index of each team's GPU-seconds over its FairShares GPU-seconds
	// in the window: 1 when every team got what weighted max-min fairness gives it.
	FairnessToIdeal float64
	// Misfits is the jobs a worker admitted whose pods could not all start on its nodes then;
	// MisfitWait their time from the worker's admission to their start, and
	// MisfitIdleGPUSeconds the worker quota they held meanwhile.
	Misfits              int
	MisfitWait           Stats
	MisfitIdleGPUSeconds float64
	// PeakWaiting is the most jobs waiting on the hub at once (for quota or for a worker).
	PeakWaiting int
	// Series is the utilization sampled every Options.SampleEvery.
	Series []Sample
	// Records is each job's times, by ID.
	Records []Record
	// Timing is wall-clock: it differs from run to run.
	Timing Timing
}

// Stats summarize samples: nearest-rank percentiles, with their count. P99 is zero below
// MinP99Samples samples: there the nearest-rank 99th percentile is the maximum under another
// name, and a report gives Max with N instead.
type Stats struct {
	N                   int
	Mean, P50, P99, Max float64
}

// MinP99Samples is the fewest samples whose nearest-rank 99th percentile is not their maximum
// (the rule of bench/record, which core may not import).
const MinP99Samples = 100

// HasP99 says whether P99 was computed (N >= MinP99Samples).
func (s Stats) HasP99() bool { return s.N >= MinP99Samples }

// TeamShare is one team's part of the GPU-seconds in the fairness window.
type TeamShare struct {
	Team   string
	Weight float64
	// Share is its part of the window's GPU-seconds; Fair is its weight's part of the weights.
	Share, Fair float64
}

// Sample is the fleet at one simulated time.
type Sample struct {
	T           float64
	Busy        int
	Utilization float64
}

// Record is one job's times and worker.
type Record struct {
	ID                              int
	Team                            string
	Submit, Admitted, Start, Finish float64
	Worker                          string
	Misfit                          bool
}

// Timing is the wall-clock cost of the dispatch decisions: per decision, the Flotilla
// dispatcher's Gangs, rank, Judge on every worker and Order (building the workers' figures
// not counted), or MultiKueue's first worker with quota.
type Timing struct {
	Decisions int
	Total     time.Duration
	// PerSecond is Decisions / Total: decisions a dispatcher doing nothing else sustains.
	PerSecond float64
	// P99 is zero below MinP99Samples decisions (Stats).
	P50, P99, Max time.Duration
	// Run is the whole simulation's wall time.
	Run time.Duration
}

func (s *sim) result(runs []*run, wall time.Duration) *Result {
	res := &Result{Policy: s.o.Policy, Jobs: len(runs), GPUs: s.fleet.GPUs(), Makespan: s.now, Series: s.series, PeakWaiting: s.peakWaiting}
	if s.o.Policy == Flotilla {
		res.Rank, res.FIFO = s.o.Rank, s.o.FIFO
	}
	if s.now > 0 {
		res.Utilization = s.busyGPUSeconds / (float64(res.GPUs) * s.now)
	}
	var arriving, n float64
	for _, x := range s.series {
		if s.lastSubmit > 0 && x.T <= s.lastSubmit {
			arriving += x.Utilization
			n++
		}
	}
	if n > 0 {
		res.UtilizationArriving, res.ArrivingSamples = arriving/n, int(n)
	}
	var delays, misfitWaits []float64
	var completion float64
	for _, r := range runs {
		delays = append(delays, r.start-r.Submit)
		completion += r.finish - r.Submit
		if r.misfit {
			res.Misfits++
			misfitWaits = append(misfitWaits, r.start-r.onWorker)
			res.MisfitIdleGPUSeconds += (r.start - r.onWorker) * float64(r.GPUs())
		}
		res.Records = append(res.Records, Record{ID: r.ID, Team: r.Team, Submit: r.Submit, Admitted: r.admitted,
			Start: r.start, Finish: r.finish, Worker: r.worker.spec.Name, Misfit: r.misfit})
	}
	res.QueueDelay = stats(delays)
	res.MisfitWait = stats(misfitWaits)
	if len(runs) > 0 {
		res.MeanCompletion = completion / float64(len(runs))
	}
	res.Fairness, res.Teams = Jain(s.o.Teams, s.window)
	res.FairnessIdeal, _ = Jain(s.o.Teams, s.fairWindow)
	res.FairnessToIdeal = JainToFair(s.window, s.fairWindow)
	res.FairnessSamples = s.windowSamples
	ds := make([]float64, len(s.decisions))
	var total time.Duration
	for i, d := range s.decisions {
		ds[i] = float64(d)
		total += d
	}
	st := stats(ds)
	res.Timing = Timing{Decisions: len(s.decisions), Total: total,
		P50: time.Duration(st.P50), P99: time.Duration(st.P99), Max: time.Duration(st.Max), Run: wall}
	if total > 0 {
		res.Timing.PerSecond = float64(len(s.decisions)) / total.Seconds()
	}
	return res
}

// stats are the samples' mean and nearest-rank percentiles.
func stats(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	rank := func(p int) float64 {
		k := (p*len(s) + 99) / 100
		return s[max(k, 1)-1]
	}
	st := Stats{N: len(s), Mean: sum / float64(len(s)), P50: rank(50), Max: s[len(s)-1]}
	if st.HasP99() {
		st.P99 = rank(99)
	}
	return st
}

// Jain is Jain's fairness index of each team's GPU-seconds over its weight, (sum x)^2 / (n sum
// x^2), and the teams' shares; 0 when the window is empty.
func Jain(teams []Team, gpuSeconds []float64) (float64, []TeamShare) {
	var total, weights float64
	for i, t := range teams {
		total += gpuSeconds[i]
		weights += t.Weight
	}
	out := make([]TeamShare, len(teams))
	xs := make([]float64, len(teams))
	for i, t := range teams {
		out[i] = TeamShare{Team: t.Name, Weight: t.Weight, Fair: t.Weight / weights}
		if total > 0 {
			out[i].Share = gpuSeconds[i] / total
		}
		xs[i] = gpuSeconds[i] / t.Weight
	}
	return JainOf(xs), out
}

// JainToFair is Jain's index of each team's GPU-seconds over the GPU-seconds FairShares gave it
// (a team given none counts 0): 1 when every team got exactly its fair allocation.
func JainToFair(gpuSeconds, fair []float64) float64 {
	ratios := make([]float64, len(gpuSeconds))
	for i := range gpuSeconds {
		if fair[i] > 0 {
			ratios[i] = gpuSeconds[i] / fair[i]
		}
	}
	return JainOf(ratios)
}

// JainOf is Jain's fairness index of xs, (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n
// when one holds everything; 0 when all are 0.
func JainOf(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}
