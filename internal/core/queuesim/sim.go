package queuesim

import (
	"container/heap"
	"fmt"
	"math"
	"time"
)

// Policy is how the hub admits jobs and chooses their workers.
type Policy string

const (
	// MultiKueueDefaults is Kueue's MultiKueue as released: strict FIFO over all teams, the first
	// worker whose own quota has room admits the job (AllAtOnce), nodes unseen.
	MultiKueueDefaults Policy = "multikueue-defaults"
	// Flotilla is fair sharing on the hub and Flotilla's dispatcher: the first worker, in rank
	// order, where workloadfit.Judge says the job's gangs fit.
	Flotilla Policy = "flotilla"
)

// Rank is the order the Flotilla dispatcher judges workers in (its MultiKueueConfig's order,
// which the placement ranks).
type Rank string

const (
	// RankFixed is the fleet's order: workers early in it fill first.
	RankFixed Rank = "fixed"
	// RankMostFree puts the workers with the most free GPUs of the job's model first (ties in
	// the fleet's order), as a placement scoring free GPUs ranks them.
	RankMostFree Rank = "most-free"
)

// Options configure a run.
type Options struct {
	Policy Policy
	// Rank is Flotilla's worker order; RankFixed when empty.
	Rank Rank
	// Teams are the teams and their fair-sharing weights; every job's team must be one of them.
	Teams []Team
	// FIFO makes Flotilla admit in strict FIFO order over all teams, as MultiKueueDefaults
	// does, instead of by fair sharing: it separates the dispatcher's effect from fair sharing's.
	FIFO bool
	// SampleEvery is the period of the utilization series in simulated seconds (60 when 0).
	SampleEvery float64
	// Two variants of the hub's admission, neither built in the real hub (bench/README.md says
	// what they measured):
	//
	// Reserve, when above 0, is a reservation for a starving job: a job with a model that has
	// waited this many seconds for that model's quota keeps every later-submitted job from it
	// until it is admitted (as a StrictFIFO queue per model, from then on), so that a gang as
	// large as its model's worker is not passed for ever by small jobs.
	Reserve float64
	// NodeAware makes the hub admit a job only when some worker's nodes of its model hold all its
	// pods at that moment (Flotilla only): quota is never held on the hub by a job that waits for
	// nodes, and a smaller job that fits takes it instead.
	NodeAware bool
}

// epoch is simulated time 0 as a wall time, for the figures' timestamps.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// sim is one run's state.
type sim struct {
	o       Options
	fleet   Fleet
	workers []*worker
	byName  map[string]*worker
	flavors []string
	// quota is the hub's free quota per model; usage the quota each team holds.
	quota          map[string]int
	usage, weights []float64
	queue          hubQueue
	dispatching    []*run // admitted on the hub, on no worker yet
	running        byFinish
	now            float64
	done           int

	busy           int
	teamBusy       []int
	backlog        []int // per team: submitted, not started
	busyGPUSeconds float64
	nextSample     float64
	series         []Sample
	window         []float64 // per team: GPU-seconds over the samples when every team was backlogged
	// demand is per team the GPUs per model ("" for any) of its jobs submitted and not finished;
	// fairWindow the GPU-seconds FairShares of it gives each team over the window's samples.
	demand        []map[string]float64
	capacity      map[string]float64
	fairWindow    []float64
	windowSamples int
	lastSubmit    float64 // the fairness window ends with the arrivals
	decisions     []time.Duration
	peakWaiting   int
}

// Run replays the jobs (sorted by Submit) on the fleet under the options' policy until every
// job has finished, and measures it.
func Run(f Fleet, jobs []Job, o Options) (*Result, error) {
	if o.SampleEvery <= 0 {
		o.SampleEvery = 60
	}
	if o.Rank == "" {
		o.Rank = RankFixed
	}
	if o.Policy != MultiKueueDefaults && o.Policy != Flotilla {
		return nil, fmt.Errorf("options: Policy %q: give %q or %q", o.Policy, MultiKueueDefaults, Flotilla)
	}
	if o.Rank != RankFixed && o.Rank != RankMostFree {
		return nil, fmt.Errorf("options: Rank %q: give %q or %q", o.Rank, RankFixed, RankMostFree)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	teams := map[string]int{}
	for i, t := range o.Teams {
		if t.Weight <= 0 {
			return nil, fmt.Errorf("options: Teams[%d] (%s): Weight %g: give a weight above 0", i, t.Name, t.Weight)
		}
		teams[t.Name] = i
	}
	runs := make([]*run, len(jobs))
	for i, j := range jobs {
		t, ok := teams[j.Team]
		if !ok {
			return nil, fmt.Errorf("job %d: Team %q is not in Options.Teams: add it", j.ID, j.Team)
		}
		if err := checkJob(f, j); err != nil {
			return nil, err
		}
		if i > 0 && j.Submit < jobs[i-1].Submit {
			return nil, fmt.Errorf("job %d: Submit %g is before the previous job's %g: sort the jobs by Submit", j.ID, j.Submit, jobs[i-1].Submit)
		}
		runs[i] = &run{Job: j, team: t, admitted: -1, onWorker: -1, start: -1, finish: -1}
	}
	s := newSim(f, o)
	if len(jobs) > 0 {
		s.lastSubmit = jobs[len(jobs)-1].Submit
	}
	wallStart := time.Now()
	next := 0
	for s.done < len(runs) {
		t := math.Inf(1)
		if next < len(runs) {
			t = runs[next].Submit
		}
		if len(s.running) > 0 && s.running[0].finish < t {
			t = s.running[0].finish
		}
		if math.IsInf(t, 1) {
			return nil, s.stuck(runs)
		}
		s.advance(t)
		for len(s.running) > 0 && s.running[0].finish <= t {
			s.end(heap.Pop(&s.running).(*run))
		}
		for next < len(runs) && runs[next].Submit <= t {
			r := runs[next]
			s.queue.push(r)
			s.backlog[r.team]++
			s.demand[r.team][r.Model] += float64(r.GPUs())
			next++
		}
		s.schedule()
		s.peakWaiting = max(s.peakWaiting, s.queue.n+len(s.dispatching))
	}
	s.advance(s.now)
	return s.result(runs, time.Since(wallStart)), nil
}

// checkJob refuses a job that could never start on the fleet, naming the field.
func checkJob(f Fleet, j Job) error {
	if j.Pods <= 0 || j.PerPod <= 0 || j.Duration <= 0 {
		return fmt.Errorf("job %d: Pods %d, PerPod %d, Duration %g: give each above 0", j.ID, j.Pods, j.PerPod, j.Duration)
	}
	for _, m := range f.Models() {
		if j.Model != "" && m.Name != j.Model {
			continue
		}
		if !f.Holds(m, j.Pods, j.PerPod) {
			return fmt.Errorf("job %d: %d pods of %d GPUs (Model %q): no worker of %s holds them: make the job smaller or ask for another model",
				j.ID, j.Pods, j.PerPod, j.Model, m.Name)
		}
		if j.Model != "" {
			return nil
		}
	}
	if j.Model != "" {
		return fmt.Errorf("job %d: Model %q: the fleet has no worker of it; it has %v", j.ID, j.Model, f.Models())
	}
	return nil
}

func newSim(f Fleet, o Options) *sim {
	s := &sim{o: o, fleet: f, byName: map[string]*worker{}, quota: map[string]int{},
		usage: make([]float64, len(o.Teams)), weights: make([]float64, len(o.Teams)),
		teamBusy: make([]int, len(o.Teams)), backlog: make([]int, len(o.Teams)), window: make([]float64, len(o.Teams)),
		demand: make([]map[string]float64, len(o.Teams)), capacity: f.Capacity(), fairWindow: make([]float64, len(o.Teams))}
	for i, t := range o.Teams {
		s.weights[i] = t.Weight
		s.demand[i] = map[string]float64{}
	}
	for _, ws := range f {
		w := newWorker(ws)
		s.workers = append(s.workers, w)
		s.byName[ws.Name] = w
		s.quota[ws.Model.Name] += ws.GPUs()
	}
	for _, m := range f.Models() {
		s.flavors = append(s.flavors, m.Name)
	}
	return s
}

// schedule runs what happens at one instant, after the jobs due have finished and arrived:
// the workers start the pods that now fit, the hub admits, and the dispatcher dispatches.
func (s *sim) schedule() {
	for _, w := range s.workers {
		if len(w.waiting) == 0 {
			continue
		}
		kept := w.waiting[:0]
		for _, r := range w.waiting {
			if nodes := w.place(r.Pods, r.PerPod); nodes != nil {
				s.start(r, nodes)
			} else {
				kept = append(kept, r)
			}
		}
		clear(w.waiting[len(kept):])
		w.waiting = kept
	}
	nodeAware := s.o.NodeAware && s.o.Policy == Flotilla
	var fits func(*run, string) bool
	if nodeAware {
		fits = s.nodesHold
	}
	s.queue.admit(s.quota, s.flavors, s.usage, s.weights, s.o.Policy == Flotilla && !s.o.FIFO, s.o.Reserve, s.now, fits, func(r *run) {
		if s.o.Policy == Flotilla {
			r.wl = workload(r)
		}
		s.dispatching = append(s.dispatching, r)
		if nodeAware {
			s.dispatchFlotilla() // at once: the next admission sees the nodes this job takes
		}
	})
	if len(s.dispatching) == 0 {
		return
	}
	if s.o.Policy == Flotilla {
		s.dispatchFlotilla()
	} else {
		s.dispatchDefaults()
	}
}

// nodesHold says whether the nodes of some worker of model hold r's pods now.
func (s *sim) nodesHold(r *run, model string) bool {
	for _, w := range s.workers {
		if w.spec.Model.Name == model && w.fits(r.Pods, r.PerPod) {
			return true
		}
	}
	return false
}

// admitOn is a worker's Kueue admitting the job: it holds the worker's quota, and its pods start
// when they all fit on the nodes; a job whose pods do not fit now waits on the worker.
func (s *sim) admitOn(r *run, w *worker) {
	w.quotaUsed += r.GPUs()
	r.worker, r.onWorker = w, s.now
	if nodes := w.place(r.Pods, r.PerPod); nodes != nil {
		s.start(r, nodes)
		return
	}
	r.misfit = true
	w.waiting = append(w.waiting, r)
}

func (s *sim) start(r *run, nodes []int) {
	r.nodes, r.start, r.finish = nodes, s.now, s.now+r.Duration
	heap.Push(&s.running, r)
	s.busy += r.GPUs()
	s.teamBusy[r.team] += r.GPUs()
	s.backlog[r.team]--
}

func (s *sim) end(r *run) {
	g := r.GPUs()
	r.worker.release(r.nodes, r.PerPod)
	r.worker.quotaUsed -= g
	s.quota[r.model] += g
	s.usage[r.team] -= float64(g)
	s.busy -= g
	s.teamBusy[r.team] -= g
	s.demand[r.team][r.Model] -= float64(g)
	s.done++
}

// advance moves simulated time to t, counting busy GPU-seconds and taking the samples due.
func (s *sim) advance(t float64) {
	for s.nextSample <= t {
		s.sample(s.nextSample)
		s.nextSample += s.o.SampleEvery
	}
	s.busyGPUSeconds += float64(s.busy) * (t - s.now)
	s.now = t
}

func (s *sim) sample(t float64) {
	s.series = append(s.series, Sample{T: t, Busy: s.busy, Utilization: float64(s.busy) / float64(s.fleet.GPUs())})
	if t > s.lastSubmit {
		return // once arrivals stop, what is left decides the shares, not the policy
	}
	for _, b := range s.backlog {
		if b == 0 {
			return
		}
	}
	s.windowSamples++
	for i, b := range s.teamBusy {
		s.window[i] += float64(b) * s.o.SampleEvery
	}
	for i, a := range FairShares(s.capacity, s.demand, s.weights) {
		s.fairWindow[i] += a * s.o.SampleEvery
	}
}

// stuck is the error when jobs remain but nothing can happen any more.
func (s *sim) stuck(runs []*run) error {
	for _, r := range runs {
		if r.start < 0 {
			return fmt.Errorf("job %d (%d pods of %d GPUs, model %q) can never start: %d jobs left, nothing running", r.ID, r.Pods, r.PerPod, r.Model, len(runs)-s.done)
		}
	}
	return fmt.Errorf("%d jobs left, nothing running", len(runs)-s.done)
}

// byFinish is a min-heap of running jobs by finish time (then ID, for determinism).
type byFinish []*run

func (h byFinish) Len() int { return len(h) }
func (h byFinish) Less(i, j int) bool {
	if h[i].finish != h[j].finish {
		return h[i].finish < h[j].finish
	}
	return h[i].ID < h[j].ID
}
func (h byFinish) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *byFinish) Push(x any)   { *h = append(*h, x.(*run)) }
func (h *byFinish) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return r
}
