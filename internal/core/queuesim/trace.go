package queuesim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Job is one submitted job: Pods pods of PerPod GPUs each, all of Model ("" for any model: the
// hub's Kueue assigns the first flavor with room). Jobs above 8 GPUs are gangs of 8-GPU pods.
type Job struct {
	ID       int
	Team     string
	Submit   float64 // seconds from the start of the run
	Duration float64 // seconds it runs once all its pods start
	Pods     int
	PerPod   int
	Model    string
}

// GPUs is how many GPUs the job holds while it runs.
func (j Job) GPUs() int { return j.Pods * j.PerPod }

// Team is a team sharing the hub's queue.
type Team struct {
	Name string
	// Weight is its fair-sharing weight.
	Weight float64
	// Share is its part of the steady (Poisson) arrivals; the shares need not sum to 1.
	Share float64
}

// TraceConfig describes a synthetic trace. The shapes follow published GPU-cluster traces
// (Microsoft Philly, SenseTime Helios, Alibaba PAI): most jobs take one GPU, a few are large
// multi-node gangs, and run times are lognormal with a long tail.
type TraceConfig struct {
	Seed uint64
	Jobs int
	// Teams share the queue; BurstTeam also submits BurstFraction of the jobs uniformly over the
	// first BurstWindow seconds.
	Teams         []Team
	BurstTeam     string
	BurstFraction float64
	BurstWindow   float64
	// Load is the steady arrivals' offered GPU-seconds per second over the fleet's GPUs: above 1
	// keeps the fleet backlogged.
	Load float64
	// AnyModel is the part of the jobs that every model could run that ask for no model.
	AnyModel float64
	// Run times: lognormal of median MedianDuration and sigma Sigma, within [MinDuration,
	// MaxDuration] seconds.
	MedianDuration, Sigma, MinDuration, MaxDuration float64
}

// DefaultTrace is the trace of the benchmark: teams a, b, c of weights 2:1:1 submitting 2:1:1
// of the steady arrivals (each asking 1.3 times its fair share), team c bursting with a fifth of all jobs in the first 10 minutes, an
// offered load of 1.3, run times of median 200 s and sigma 1.3 up to 4 hours.
func DefaultTrace(jobs int, seed uint64) TraceConfig {
	return TraceConfig{
		Seed: seed, Jobs: jobs,
		Teams:     []Team{{Name: "a", Weight: 2, Share: 2}, {Name: "b", Weight: 1, Share: 1}, {Name: "c", Weight: 1, Share: 1}},
		BurstTeam: "c", BurstFraction: 0.2, BurstWindow: 600,
		Load: 1.3, AnyModel: 0.2,
		MedianDuration: 200, Sigma: 1.3, MinDuration: 10, MaxDuration: 4 * 3600,
	}
}

// size draws a job's shape: 55% 1 GPU, 25% 2-4, 15% 8 (one pod each), 5% gangs of 2, 4 or 8
// pods of 8 GPUs (16, 32, 64).
func size(r *rand.Rand) (pods, perPod int) {
	u := r.Float64()
	switch {
	case u < 0.55:
		return 1, 1
	case u < 0.80:
		return 1, pick(r, []int{2, 3, 4}, []float64{0.5, 0.1, 0.4})
	case u < 0.95:
		return 1, 8
	}
	return pick(r, []int{2, 4, 8}, []float64{0.45, 0.35, 0.2}), 8
}

// pick draws one of vs by weights ws.
func pick[T any](r *rand.Rand, vs []T, ws []float64) T {
	var sum float64
	for _, w := range ws {
		sum += w
	}
	u := r.Float64() * sum
	for i, w := range ws {
		if u < w {
			return vs[i]
		}
		u -= w
	}
	return vs[len(vs)-1]
}

// Generate draws the trace for the fleet: each job asks for a model that some worker can run
// it on (weighted by the fleet's GPUs of each model), or for any model when every model could;
// a gang larger than every worker of every model is cut down to the largest that fits.
// Jobs are sorted by submission time and numbered from 0.
func Generate(f Fleet, c TraceConfig) ([]Job, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
	models := f.Models()
	jobs := make([]Job, c.Jobs)
	var gpuSeconds float64
	for i := range jobs {
		pods, per := size(r)
		var fits []Model
		var weights []float64
		for pods > 0 {
			for _, m := range models {
				if f.Holds(m, pods, per) {
					fits = append(fits, m)
					weights = append(weights, float64(f.GPUsOf(m.Name)))
				}
			}
			if len(fits) > 0 {
				break
			}
			pods /= 2
		}
		if pods == 0 {
			return nil, fmt.Errorf("no worker of the fleet holds a pod of %d GPUs: give the fleet nodes of at least %d GPUs", per, per)
		}
		model := pick(r, fits, weights).Name
		if len(fits) == len(models) && r.Float64() < c.AnyModel {
			model = ""
		}
		d := c.MedianDuration * math.Exp(c.Sigma*r.NormFloat64())
		d = math.Round(min(max(d, c.MinDuration), c.MaxDuration))
		jobs[i] = Job{Pods: pods, PerPod: per, Model: model, Duration: d}
		gpuSeconds += float64(pods*per) * d
	}
	burst := int(math.Round(c.BurstFraction * float64(c.Jobs)))
	steady := c.Jobs - burst
	// The steady arrivals' rate gives the offered load: Load x GPUs per second of GPU-seconds.
	rate := c.Load * float64(f.GPUs()) / (gpuSeconds / float64(c.Jobs))
	teams := make([]string, len(c.Teams))
	shares := make([]float64, len(c.Teams))
	for i, t := range c.Teams {
		teams[i], shares[i] = t.Name, t.Share
	}
	var t float64
	for i := range steady {
		t += r.ExpFloat64() / rate
		jobs[i].Submit = math.Round(t*1000) / 1000
		jobs[i].Team = pick(r, teams, shares)
	}
	for i := steady; i < c.Jobs; i++ {
		jobs[i].Submit = math.Round(r.Float64()*c.BurstWindow*1000) / 1000
		jobs[i].Team = c.BurstTeam
	}
	slices.SortStableFunc(jobs, func(a, b Job) int {
		switch {
		case a.Submit < b.Submit:
			return -1
		case a.Submit > b.Submit:
			return 1
		}
		return 0
	})
	for i := range jobs {
		jobs[i].ID = i
	}
	return jobs, nil
}

func (c TraceConfig) validate() error {
	switch {
	case c.Jobs <= 0:
		return fmt.Errorf("trace: Jobs is %d: give at least 1", c.Jobs)
	case len(c.Teams) == 0:
		return fmt.Errorf("trace: Teams is empty: give at least one team")
	case c.Load <= 0:
		return fmt.Errorf("trace: Load is %g: give an offered load above 0 (1.3 keeps the fleet backlogged)", c.Load)
	case c.MedianDuration <= 0 || c.MaxDuration < c.MinDuration:
		return fmt.Errorf("trace: durations median %g, min %g, max %g: give a median above 0 and max at least min", c.MedianDuration, c.MinDuration, c.MaxDuration)
	case c.BurstFraction < 0 || c.BurstFraction >= 1:
		return fmt.Errorf("trace: BurstFraction is %g: give a fraction in [0, 1)", c.BurstFraction)
	}
	var shares float64
	for i, t := range c.Teams {
		if t.Weight <= 0 || t.Share < 0 {
			return fmt.Errorf("trace: Teams[%d] (%s): Weight %g, Share %g: give a weight above 0 and a share at least 0", i, t.Name, t.Weight, t.Share)
		}
		shares += t.Share
	}
	if shares <= 0 {
		return fmt.Errorf("trace: the teams' shares sum to 0: give some team a Share above 0")
	}
	if c.BurstFraction > 0 && !slices.ContainsFunc(c.Teams, func(t Team) bool { return t.Name == c.BurstTeam }) {
		return fmt.Errorf("trace: BurstTeam %q is not one of Teams: name one of them", c.BurstTeam)
	}
	return nil
}
