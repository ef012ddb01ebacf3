package bench

// What a benchmark leaves: every figure it reports through report (or reportLatency) is also a
// figure of its record (bench/record), written to bench/results/ when the benchmark ends. A
// benchmark starts its record with startRecord, its first line; report fails a benchmark that
// has none, so no figure is printed that is not kept. Not build-tagged: TestUnitOf runs with the
// unit tests.

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flotilla/flotilla/bench/record"
)

var (
	recordsMu sync.Mutex
	// records are the running benchmarks' records, by top-level benchmark name.
	records = map[string]*record.Record{}
	// started dates every record of this process, so that the runs of one benchmark (b.N = 1,
	// then b.N = 3 with -benchtime 3x) write one file, the last run's.
	started = time.Now().UTC().Truncate(time.Second)
)

// startRecord starts the record of benchmark b (top level), named name (its make target, or a
// name of its own when a target runs several benchmarks). It is written when b ends unless b
// failed or was skipped, and b fails if it reported nothing.
func startRecord(b *testing.B, name string) *record.Record {
	b.Helper()
	rec := record.New(name)
	rec.Date = started
	rec.Param("benchmark", b.Name())
	if smoke() {
		rec.Param("smoke", true)
	}
	recordsMu.Lock()
	records[b.Name()] = rec
	recordsMu.Unlock()
	b.Cleanup(func() {
		recordsMu.Lock()
		defer recordsMu.Unlock()
		if b.Skipped() || b.Failed() {
			return // a failed run's figures are not results
		}
		path, err := rec.Write()
		if err != nil {
			b.Errorf("record of %s: %v", b.Name(), err)
			return
		}
		b.Logf("record: %s", path)
	})
	return rec
}

// recordOf is the record of b's top-level benchmark, and the figure name prefix of b's
// sub-benchmark ("" at the top level).
func recordOf(b *testing.B) (*record.Record, string) {
	b.Helper()
	top, sub, _ := strings.Cut(b.Name(), "/")
	recordsMu.Lock()
	rec := records[top]
	recordsMu.Unlock()
	if rec == nil {
		b.Fatalf("%s reports a figure without a record: call startRecord first", top)
	}
	if sub != "" {
		sub += "/"
	}
	return rec, sub
}

// param records a parameter of b's run (a size, a setting) in its record.
func param(b *testing.B, name string, value any) {
	b.Helper()
	rec, _ := recordOf(b)
	recordsMu.Lock()
	defer recordsMu.Unlock()
	rec.Param(name, value)
}

// report reports value in unit as b.ReportMetric does, and adds it to the record as a figure of
// Flotilla from one sample.
func report(b *testing.B, value float64, unit string) {
	b.Helper()
	reportN(b, record.Flotilla, value, unit, 1)
}

// reportN is report for a figure of side summarizing n samples.
func reportN(b *testing.B, side record.Side, value float64, unit string, n int) {
	b.Helper()
	b.ReportMetric(value, unit)
	if unit == "ns/op" {
		return // the benchmark framework's own, zeroed by benchmarks that time nothing per op
	}
	add(b, side, unit, value, n)
}

// reportSide reports value as metric tag+"-"+metric (the benchmark's output needs a name per
// side) and adds it to the record as metric of side.
func reportSide(b *testing.B, side record.Side, tag, metric string, value float64, n int) {
	b.Helper()
	b.ReportMetric(value, tag+"-"+metric)
	add(b, side, metric, value, n)
}

// add adds a figure to b's record; a figure of the same name and side is replaced.
func add(b *testing.B, side record.Side, metric string, value float64, n int) {
	b.Helper()
	rec, sub := recordOf(b)
	recordsMu.Lock()
	defer recordsMu.Unlock()
	f := record.Figure{Name: sub + metric, Value: value, Unit: unitOf(metric), N: n, Side: side}
	for i, g := range rec.Figures {
		if g.Name == f.Name && g.Side == f.Side {
			rec.Figures[i] = f // a later run of the same benchmark (b.N grew): its figure counts
			return
		}
	}
	rec.Figures = append(rec.Figures, f)
}

// unitOf is the unit in a metric name: its first "-"-separated word that is a unit ("s",
// "ms", "MiB", "%", "jobs/s", ...), or "" for a count.
func unitOf(metric string) string {
	for w := range strings.SplitSeq(metric, "-") {
		switch {
		case w == "s" || w == "ms" || w == "MiB" || w == "%":
			return w
		case w == "%cpu":
			return "%"
		case strings.HasSuffix(w, "/s") || strings.HasSuffix(w, "/job"):
			return w
		}
	}
	return ""
}

// reportLatency reports ds as metrics in unit (time.Second or time.Millisecond, named "s" or
// "ms"): name("p50"), name("p99") only with record.MinP99Samples or more, name("max"), and the
// sample count as name("samples"), each figure with its n.
func reportLatency(b *testing.B, ds []time.Duration, unit time.Duration, name func(stat string) string) {
	b.Helper()
	latencyFigures(ds, unit, name, func(metric string, v float64, n int) { reportN(b, record.Flotilla, v, metric, n) })
}

// reportLatencySide is reportLatency for a figure of side, named as reportSide names them.
func reportLatencySide(b *testing.B, side record.Side, ds []time.Duration, unit time.Duration, name func(stat string) string) {
	b.Helper()
	latencyFigures(ds, unit, name, func(metric string, v float64, n int) { reportSide(b, side, string(side), metric, v, n) })
}

// latencyFigures puts ds's p50, p99 (from 100 samples on), max and sample count in unit.
func latencyFigures(ds []time.Duration, unit time.Duration, name func(stat string) string, put func(metric string, v float64, n int)) {
	s := record.Summarize(ds)
	if s.N == 0 {
		return
	}
	u := record.UnitName(unit)
	in := func(d time.Duration) float64 { return float64(d) / float64(unit) }
	put(u+"-"+name("p50"), in(s.P50), s.N)
	if s.HasP99() {
		put(u+"-"+name("p99"), in(s.P99), s.N)
	}
	put(u+"-"+name("max"), in(s.Max), s.N)
	put(name("samples"), float64(s.N), s.N)
}

// latencySummary is record.Summarize(ds).String().
func latencySummary(ds []time.Duration) string { return record.Summarize(ds).String() }

func TestUnitOf(t *testing.T) {
	for metric, want := range map[string]string{
		"s-all-available": "s", "MiB-rss-hub-peak": "MiB", "cpu-%-hub": "%", "%cpu-hub": "%",
		"a-utilization-%": "%", "jobs/s": "jobs/s", "b-writes/job": "writes/job", "clusters": "",
		"a-delay-p50-s": "s", "search-ms-p50": "ms", "a-jain": "",
	} {
		if got := unitOf(metric); got != want {
			t.Errorf("unitOf(%q) = %q, want %q", metric, got, want)
		}
	}
}

// smoke says whether this is a smoke run: every benchmark at a tiny size (record.SmokeEnv).
func smoke() bool { return record.Smoke() }

// sized is the size named by the environment variable env, else tiny in a smoke run, else full.
func sized(b *testing.B, env string, full, tiny int) int {
	b.Helper()
	if os.Getenv(env) == "" && smoke() {
		return tiny
	}
	return envInt(b, env, full)
}

// envInt is the positive number in the environment variable name, or def when it is unset.
func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// selected says whether a long benchmark runs: in a smoke run always, else only when -test.bench
// names it (contains word), so that `-bench .` (make bench) skips it.
func selected(word string) bool {
	f := flag.Lookup("test.bench")
	return smoke() || (f != nil && strings.Contains(f.Value.String(), word))
}
