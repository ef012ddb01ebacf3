package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla/flotilla/internal/core/queuesim"
)

// queueSimSeeds is how many traces the seeds comparison draws.
const queueSimSeeds = 8

// queueSimSeedVariants are the policies the seeds comparison runs: the four of the fleets'
// tables' kind, and the two hub admission variants that were tried in simulation and not built
// (queuesim.Options.NodeAware, Reserve).
var queueSimSeedVariants = []queueSimVariant{
	{"(a) MultiKueue defaults", queuesim.Options{Policy: queuesim.MultiKueueDefaults}},
	{"(b) Flotilla dispatch, FIFO admission", queuesim.Options{Policy: queuesim.Flotilla, FIFO: true}},
	{"(b) Flotilla", queuesim.Options{Policy: queuesim.Flotilla}},
	{"(b) + node-aware hub admission", queuesim.Options{Policy: queuesim.Flotilla, NodeAware: true}},
	{"(b) FIFO + node-aware hub admission", queuesim.Options{Policy: queuesim.Flotilla, FIFO: true, NodeAware: true}},
	{"(b) + reservation after 600 s (30 s replayed)", queuesim.Options{Policy: queuesim.Flotilla, Reserve: 600}},
}

// benchQueueSimSeeds simulates `make bench-queue`'s fleet and trace shape (qWorkers, qTrace with
// 80 jobs) over queueSimSeeds seeds, and prints each variant's mean figures beside the bounds
// no policy can beat (queuesim.Bound). Times are in replayed seconds (trace seconds / 20, as
// bench-queue replays them), so that they compare with bench-queue's table.
func benchQueueSimSeeds(b *testing.B) {
	const compress = 20
	got := make([]seedFigures, len(queueSimSeedVariants))
	var bound seedFigures
	var seed1 []string
	for seed := uint64(1); seed <= queueSimSeeds; seed++ {
		tc := qTrace(80, seed)
		jobs, err := queuesim.Generate(qWorkers, tc)
		if err != nil {
			b.Fatal(err)
		}
		bd := queuesim.Bound(qWorkers, jobs)
		bs := seedFigures{util: bd.Utilization, makespan: bd.Makespan / compress, jct: bd.MeanCompletion / compress}
		bound.add(bs)
		if seed == qSeed {
			seed1 = append(seed1, bs.boundRow())
		}
		for i, v := range queueSimSeedVariants {
			o := v.o
			o.Teams, o.SampleEvery = tc.Teams, compress
			res, err := queuesim.Run(qWorkers, jobs, o)
			if err != nil {
				b.Fatalf("seed %d, %s: %v", seed, v.name, err)
			}
			s := seedFigures{res.Utilization, res.Makespan / compress, tailOf(res.QueueDelay) / compress, res.MeanCompletion / compress,
				res.Fairness, res.FairnessIdeal, res.FairnessToIdeal, float64(res.Misfits)}
			got[i].add(s)
			if seed == qSeed {
				seed1 = append(seed1, s.row(v.name, "%.0f"))
			}
		}
	}
	head := "| variant | GPU utilization | makespan | queueing delay tail (p99 from 100 jobs, else the maximum; 80 jobs: the maximum) | mean JCT | Jain's index, share/weight | the same of the fair allocation of this run's demand | Jain's index, share/fair allocation | misfits |\n|---|---|---|---|---|---|---|---|---|\n"
	fmt.Printf("\n### bench-queue's fleet (%d workers, %d GPUs), 80 jobs, seeds 1-%d: means over the seeds, replayed seconds, %s\n\n", len(qWorkers), qWorkers.GPUs(), queueSimSeeds, time.Now().UTC().Format("2006-01-02"))
	fmt.Print(head)
	fmt.Println(bound.boundRow())
	for i, v := range queueSimSeedVariants {
		fmt.Println(got[i].row(v.name, "%.1f"))
	}
	fmt.Printf("\nseed %d alone (the trace make bench-queue replays):\n\n%s%s\n", qSeed, head, strings.Join(seed1, "\n"))
	report(b, 100*got[0].util, "a-utilization-%")
	report(b, 100*got[2].util, "b-utilization-%")
	report(b, 100*bound.util, "bound-utilization-%")
}

// tailOf is the p99 from queuesim.MinP99Samples samples, else the maximum.
func tailOf(s queuesim.Stats) float64 {
	if s.HasP99() {
		return s.P99
	}
	return s.Max
}

// seedFigures are one run's figures of the seeds comparison (times in replayed seconds), or
// their means over the seeds.
type seedFigures struct{ util, makespan, tail, jct, jain, ideal, toIdeal, misfits float64 }

// add adds one seed's figures to the means.
func (m *seedFigures) add(s seedFigures) {
	const n = queueSimSeeds
	m.util, m.makespan, m.tail, m.jct = m.util+s.util/n, m.makespan+s.makespan/n, m.tail+s.tail/n, m.jct+s.jct/n
	m.jain, m.ideal, m.toIdeal, m.misfits = m.jain+s.jain/n, m.ideal+s.ideal/n, m.toIdeal+s.toIdeal/n, m.misfits+s.misfits/n
}

// row is the table's row of a variant; misfits are printed with misfitFormat.
func (m seedFigures) row(name, misfitFormat string) string {
	return fmt.Sprintf("| %s | %.1f%% | %.1f s | %.1f s | %.1f s | %.3f | %.3f | %.3f | "+misfitFormat+" |",
		name, 100*m.util, m.makespan, m.tail, m.jct, m.jain, m.ideal, m.toIdeal, m.misfits)
}

// boundRow is the table's row of queuesim.Bound's figures.
func (m seedFigures) boundRow() string {
	return fmt.Sprintf("| bound (no policy does better) | ≤ %.1f%% | ≥ %.1f s | ≥ 0 | ≥ %.1f s | | | | |", 100*m.util, m.makespan, m.jct)
}
