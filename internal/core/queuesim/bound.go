package queuesim

// Bounds are what no policy can beat for a trace on a fleet: how far a measured schedule is from
// them is the room any scheduler has left there.
type Bounds struct {
	// Makespan is a lower bound on the makespan: the latest of (a) a job's submission plus its
	// run time, (b) per model, its first job's submission plus the GPU-seconds of the jobs asking
	// for that model over the model's GPUs, and (c) the first submission plus all GPU-seconds
	// over the fleet's GPUs.
	Makespan float64
	// Utilization is the matching upper bound: all GPU-seconds over GPUs x Makespan.
	Utilization float64
	// MeanCompletion is a lower bound on the mean job completion time: the mean run time (every
	// job starting when it is submitted).
	MeanCompletion float64
	// Models is each model's GPU-seconds over its GPUs, from its first job's submission: the
	// busiest model is the bottleneck. Jobs for any model are not counted in any.
	Models map[string]float64
}

// Bound computes the bounds of jobs on f. It assumes nothing of the policy: pods may go to any
// node of their model, at any time after submission.
func Bound(f Fleet, jobs []Job) Bounds {
	b := Bounds{Models: map[string]float64{}}
	if len(jobs) == 0 || f.GPUs() == 0 {
		return b
	}
	work := map[string]float64{}
	first := map[string]float64{}
	var total, durations float64
	start := jobs[0].Submit
	for _, j := range jobs {
		gs := float64(j.GPUs()) * j.Duration
		total += gs
		durations += j.Duration
		start = min(start, j.Submit)
		b.Makespan = max(b.Makespan, j.Submit+j.Duration)
		if j.Model == "" {
			continue
		}
		work[j.Model] += gs
		if t, ok := first[j.Model]; !ok || j.Submit < t {
			first[j.Model] = j.Submit
		}
	}
	for m, w := range work {
		if g := f.GPUsOf(m); g > 0 {
			b.Models[m] = w / float64(g)
			b.Makespan = max(b.Makespan, first[m]+w/float64(g))
		}
	}
	b.Makespan = max(b.Makespan, start+total/float64(f.GPUs()))
	b.Utilization = total / (float64(f.GPUs()) * b.Makespan)
	b.MeanCompletion = durations / float64(len(jobs))
	return b
}
