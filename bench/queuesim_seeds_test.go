package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla/flotilla/internal/queuesim"
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
	type sums struct{ util, makespan, p99, jct, jain, ideal, toIdeal, misfits float64 }
	got := make([]sums, len(queueSimSeedVariants))
	var bound sums
	var seed1 []string
	for seed := uint64(1); seed <= queueSimSeeds; seed++ {
		tc := qTrace(80, seed)
		jobs, err := queuesim.Generate(qWorkers, tc)
		if err != nil {
			b.Fatal(err)
		}
		bd := queuesim.Bound(qWorkers, jobs)
		bound.util += bd.Utilization / queueSimSeeds
		bound.makespan += bd.Makespan / compress / queueSimSeeds
		bound.jct += bd.MeanCompletion / compress / queueSimSeeds
		if seed == qSeed {
			seed1 = append(seed1, fmt.Sprintf("| bound (no policy does better) | ≤ %.1f%% | ≥ %.1f s | ≥ 0 | ≥ %.1f s | | | | |", 100*bd.Utilization, bd.Makespan/compress, bd.MeanCompletion/compress))
		}
		for i, v := range queueSimSeedVariants {
			o := v.o
			o.Teams, o.SampleEvery = tc.Teams, compress
			res, err := queuesim.Run(qWorkers, jobs, o)
			if err != nil {
				b.Fatalf("seed %d, %s: %v", seed, v.name, err)
			}
			s := sums{res.Utilization, res.Makespan / compress, res.QueueDelay.P99 / compress, res.MeanCompletion / compress, res.Fairness, res.FairnessIdeal, res.FairnessToIdeal, float64(res.Misfits)}
			got[i].util += s.util / queueSimSeeds
			got[i].makespan += s.makespan / queueSimSeeds
			got[i].p99 += s.p99 / queueSimSeeds
			got[i].jct += s.jct / queueSimSeeds
			got[i].jain += s.jain / queueSimSeeds
			got[i].ideal += s.ideal / queueSimSeeds
			got[i].toIdeal += s.toIdeal / queueSimSeeds
			got[i].misfits += s.misfits / queueSimSeeds
			if seed == qSeed {
				seed1 = append(seed1, fmt.Sprintf("| %s | %.1f%% | %.1f s | %.1f s | %.1f s | %.3f | %.3f | %.3f | %.0f |", v.name, 100*s.util, s.makespan, s.p99, s.jct, s.jain, s.ideal, s.toIdeal, s.misfits))
			}
		}
	}
	head := "| variant | GPU utilization | makespan | queueing delay p99 (n=80: the maximum) | mean JCT | Jain's index, share/weight | the same of the fair allocation of this run's demand | Jain's index, share/fair allocation | misfits |\n|---|---|---|---|---|---|---|---|---|\n"
	fmt.Printf("\n### bench-queue's fleet (%d workers, %d GPUs), 80 jobs, seeds 1-%d: means over the seeds, replayed seconds, %s\n\n", len(qWorkers), qWorkers.GPUs(), queueSimSeeds, time.Now().UTC().Format("2006-01-02"))
	fmt.Print(head)
	fmt.Printf("| bound (no policy does better) | ≤ %.1f%% | ≥ %.1f s | ≥ 0 | ≥ %.1f s | | | | |\n", 100*bound.util, bound.makespan, bound.jct)
	for i, v := range queueSimSeedVariants {
		g := got[i]
		fmt.Printf("| %s | %.1f%% | %.1f s | %.1f s | %.1f s | %.3f | %.3f | %.3f | %.1f |\n", v.name, 100*g.util, g.makespan, g.p99, g.jct, g.jain, g.ideal, g.toIdeal, g.misfits)
	}
	fmt.Printf("\nseed %d alone (the trace make bench-queue replays):\n\n%s%s\n", qSeed, head, strings.Join(seed1, "\n"))
	b.ReportMetric(100*got[0].util, "a-utilization-%")
	b.ReportMetric(100*got[2].util, "b-utilization-%")
	b.ReportMetric(100*bound.util, "bound-utilization-%")
}
