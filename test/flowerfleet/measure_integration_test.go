//go:build integration

package flowerfleet

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/bench/record"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// measurements are the timings `make bench-fl` reports and records (bench/record, when
// FLOTILLA_BENCH_RESULTS names a folder, as make bench-fl sets it): never asserted. Times are when the test saw the status change (it polls every 200 ms).
type measurements struct {
	created, clientsRunning, submitted time.Time
	rounds                             map[int32]time.Time
	lost, lostReported                 time.Time
	cpuStart, cpuEnd                   cpuSample
}

// cpuSample is the CPU time, in seconds, of the hub's kube-apiserver, the fleet's etcd and this
// process (the hub's controllers, the spokes' agents and the process runtimes), and when.
type cpuSample struct {
	at                       time.Time
	apiserver, etcd, process float64
}

func (f *fleet) cpu(t *testing.T) cpuSample {
	t.Helper()
	ticks := func(p *localk8s.Process) float64 {
		n, err := localk8s.CPUTicks(p.PID())
		if err != nil {
			t.Logf("CPU of %s: %v", p.Name, err)
		}
		return float64(n) / 100 // CLK_TCK on Linux
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return cpuSample{at: time.Now(), apiserver: ticks(f.env.Hub.APIServer), etcd: ticks(f.env.Fleet.Etcds[0].Process), process: self}
}

// report prints the measurements and, when FLOTILLA_BENCH_RESULTS is set, writes them as a
// record (bench/record).
func (m *measurements) report(t *testing.T, f *fleet, lostAfter int32, roundClients []flv1alpha1.RoundClients) {
	t.Helper()
	sec := func(d time.Duration) float64 { return d.Round(10 * time.Millisecond).Seconds() }
	var rs []int32
	for r := range m.rounds {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	// Rounds with three clients: from round 1 to the round the loss came after.
	var threeClient []float64
	for _, r := range rs {
		if r > 1 && r <= lostAfter {
			threeClient = append(threeClient, m.rounds[r].Sub(m.rounds[r-1]).Seconds())
		}
	}
	mean := 0.0
	for _, d := range threeClient {
		mean += d / float64(len(threeClient))
	}
	window := m.cpuEnd.at.Sub(m.cpuStart.at).Minutes()
	per := func(a, b float64) float64 { return (b - a) / window / 60 * 100 } // % of one core
	out := map[string]any{
		"created_to_clients_running_s":     sec(m.clientsRunning.Sub(m.created)),
		"created_to_first_round_s":         sec(m.rounds[1].Sub(m.created)),
		"submitted_to_first_round_s":       sec(m.rounds[1].Sub(m.submitted)),
		"round_seconds_3_clients":          threeClient,
		"rounds_per_minute_3_clients":      60 / mean,
		"lost_to_reported_s":               sec(m.lostReported.Sub(m.lost)),
		"lost_to_next_round_s":             sec(m.rounds[lostAfter+1].Sub(m.lost)),
		"lost_to_first_round_without_it_s": sec(m.firstRoundWithout(roundClients, lostAfter, "spoke-3").Sub(m.lost)),
		"hub_apiserver_cpu_percent":        per(m.cpuStart.apiserver, m.cpuEnd.apiserver),
		"etcd_cpu_percent":                 per(m.cpuStart.etcd, m.cpuEnd.etcd),
		"hub_agents_runtimes_cpu_percent":  per(m.cpuStart.process, m.cpuEnd.process),
		"training_window_s":                sec(m.cpuEnd.at.Sub(m.cpuStart.at)),
	}
	var b strings.Builder
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-34s %v\n", k, out[k])
	}
	f.show(t, "Measured (one run; times as the test saw the status change)")
	f.print(t, b.String())
	if os.Getenv(record.DirEnv) == "" {
		return
	}
	rec := record.New("bench-fl")
	rec.Param("lostAfterRound", lostAfter)
	rec.Param("roundSeconds3Clients", fmt.Sprint(threeClient))
	for _, k := range keys {
		v, ok := out[k].(float64)
		if !ok {
			continue // the rounds' list, kept as a parameter above
		}
		n := 1
		if k == "rounds_per_minute_3_clients" {
			n = len(threeClient)
		}
		rec.Add(record.Flotilla, k, v, flUnit(k), n)
	}
	path, err := rec.Write()
	if err != nil {
		t.Errorf("writing the record: %v", err)
		return
	}
	t.Logf("record: %s", path)
}

// flUnit is the unit a measurement's name ends with.
func flUnit(name string) string {
	switch {
	case strings.HasSuffix(name, "_s"):
		return "s"
	case strings.HasSuffix(name, "_percent"):
		return "%"
	case strings.HasSuffix(name, "_per_minute_3_clients"):
		return "rounds/min"
	}
	return ""
}

// firstRoundWithout is when the first round after lostAfter that took no update from cluster was
// seen aggregated (the round under way when the cluster was lost may still take its update).
func (m *measurements) firstRoundWithout(rcs []flv1alpha1.RoundClients, lostAfter int32, cluster string) time.Time {
	for _, rc := range rcs {
		if rc.Round > lostAfter && !slices.Contains(rc.Clusters, cluster) {
			return m.rounds[rc.Round]
		}
	}
	return m.lost
}
