package queuesim

import kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

// run is a job's progress through the simulation.
type run struct {
	Job
	team  int    // index in the teams
	model string // the model the hub's Kueue assigned (the job's, or the first flavor with room)
	// times in simulated seconds; -1 until reached
	admitted, onWorker, start, finish float64
	worker                            *worker
	nodes                             []int
	misfit                            bool                   // admitted by a worker whose nodes could not hold all its pods then
	wl                                *kueuev1beta2.Workload // what the Flotilla dispatcher judges
}

// bucket is the jobs of one team asking for the same model and GPUs, in submission order: when
// its head does not fit the hub's quota, none of them does.
type bucket struct {
	team  int
	model string
	gpus  int
	jobs  []*run
	head  int
}

type bucketKey struct {
	team  int
	model string
	gpus  int
}

// hubQueue is the jobs waiting for the hub's Kueue to reserve quota.
type hubQueue struct {
	buckets []*bucket
	index   map[bucketKey]int
	blocked []bool
	n       int
}

func (q *hubQueue) push(r *run) {
	if q.index == nil {
		q.index = map[bucketKey]int{}
	}
	k := bucketKey{team: r.team, model: r.Model, gpus: r.GPUs()}
	i, ok := q.index[k]
	if !ok {
		i = len(q.buckets)
		q.index[k] = i
		q.buckets = append(q.buckets, &bucket{team: k.team, model: k.model, gpus: k.gpus})
		q.blocked = append(q.blocked, false)
	}
	q.buckets[i].jobs = append(q.buckets[i].jobs, r)
	q.n++
}

// admit reserves the hub's quota for as many heads as fit, best first: with fair sharing, the
// team holding the least quota per unit of weight, then the earliest submitted; without, the
// earliest submitted over all teams. A head that does not fit lets the next pass
// (BestEffortFIFO). quota is the hub's free quota per model; flavors the models in flavor order.
// With reserve above 0, the earliest head that has waited reserve seconds and does not fit its
// model's quota keeps later jobs from that model (Options.Reserve); fits, when not nil, must
// also hold for a head to be admitted (Options.NodeAware).
func (q *hubQueue) admit(quota map[string]int, flavors []string, usage, weights []float64, fair bool, reserve float64, now float64, fits func(*run, string) bool, admitted func(*run)) {
	if q.n == 0 {
		return
	}
	for i := range q.blocked {
		q.blocked[i] = false
	}
	reserved := q.starving(quota, reserve, now)
	for {
		best, bestModel := -1, ""
		for i, b := range q.buckets {
			if q.blocked[i] || b.head == len(b.jobs) {
				continue
			}
			m := assign(quota, flavors, b.model, b.gpus)
			if o := reserved[m]; o != nil && o.ID < b.jobs[b.head].ID {
				m = ""
			}
			if m != "" && fits != nil && !fits(b.jobs[b.head], m) {
				m = ""
			}
			if m == "" {
				q.blocked[i] = true // the hub's quota only shrinks within a pass
				continue
			}
			if best < 0 || q.before(b, q.buckets[best], usage, weights, fair) {
				best, bestModel = i, m
			}
		}
		if best < 0 {
			return
		}
		b := q.buckets[best]
		r := b.jobs[b.head]
		b.jobs[b.head] = nil
		b.head++
		if b.head > 64 && b.head*2 > len(b.jobs) {
			b.jobs = append([]*run(nil), b.jobs[b.head:]...)
			b.head = 0
		}
		q.n--
		r.model = bestModel
		r.admitted = now
		quota[bestModel] -= r.GPUs()
		usage[r.team] += float64(r.GPUs())
		admitted(r)
	}
}

// before orders two buckets' heads.
func (q *hubQueue) before(a, b *bucket, usage, weights []float64, fair bool) bool {
	ra, rb := a.jobs[a.head], b.jobs[b.head]
	if fair && a.team != b.team {
		sa, sb := usage[a.team]/weights[a.team], usage[b.team]/weights[b.team]
		if sa != sb {
			return sa < sb
		}
	}
	return ra.ID < rb.ID
}

// assign is the model the hub's Kueue gives a job of gpus GPUs asking for model ("" for any:
// the first flavor with room), or "" when the quota has no room.
func assign(quota map[string]int, flavors []string, model string, gpus int) string {
	if model != "" {
		if quota[model] >= gpus {
			return model
		}
		return ""
	}
	for _, m := range flavors {
		if quota[m] >= gpus {
			return m
		}
	}
	return ""
}

// starving is, per model, the earliest-submitted head of a queue that asks for that model, has
// waited at least reserve seconds and does not fit the model's free quota (Options.Reserve):
// it holds the model's quota against later jobs. Nil when reserve is 0.
func (q *hubQueue) starving(quota map[string]int, reserve, now float64) map[string]*run {
	if reserve <= 0 {
		return nil
	}
	out := map[string]*run{}
	for _, b := range q.buckets {
		if b.head == len(b.jobs) || b.model == "" {
			continue
		}
		r := b.jobs[b.head]
		if now-r.Submit < reserve || quota[b.model] >= b.gpus {
			continue
		}
		if o := out[b.model]; o == nil || r.ID < o.ID {
			out[b.model] = r
		}
	}
	return out
}
