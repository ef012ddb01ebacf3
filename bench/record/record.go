// Package record is what a benchmark leaves behind: one JSON record per run under bench/results/
// (commit, date, machine, the run's parameters, and every figure with its unit, its sample count
// and the side that produced it: Flotilla or the peer it is compared with), and latency summaries
// that never call a maximum a 99th percentile. bench/README.md's tables are generated from the
// records (go run ./bench/tables), so a figure in them is one a run wrote, not one copied by hand.
//
// It is a leaf: the benchmarks in bench/, the tests that double as benchmarks (test/chaos,
// test/flowerfleet, test/dashboard) and the tables tool import it; nothing in internal/ does.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DirEnv names the folder records are written to. `make bench-*` leaves it unset (records go to
// the checkout's bench/results/); `make bench-smoke` sets it to a temporary folder.
const DirEnv = "FLOTILLA_BENCH_RESULTS"

// SmokeEnv, when set, runs every benchmark at a tiny size in seconds (make bench-smoke, part of
// make test): it proves a benchmark still measures and records its figures, not what they are.
const SmokeEnv = "FLOTILLA_BENCH_SMOKE"

// Smoke says whether this is a smoke run (SmokeEnv).
func Smoke() bool { return os.Getenv(SmokeEnv) != "" }

// Side says which system produced a figure.
type Side string

const (
	// Flotilla is the system under test.
	Flotilla Side = "flotilla"
	// Peer is what it is compared with in the same run (Record.Peer names it).
	Peer Side = "peer"
)

// Figure is one measured value.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Unit is "s", "ms", "MiB", "%", "jobs", ...; "" for a plain count or ratio.
	Unit string `json:"unit"`
	// N is how many samples the value summarizes (1 for a single measurement).
	N    int  `json:"n"`
	Side Side `json:"side"`
}

// Machine is where the run happened.
type Machine struct {
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memoryBytes"`
	CPU         string `json:"cpu,omitempty"`
	GoVersion   string `json:"goVersion"`
}

// Record is one run of one benchmark.
type Record struct {
	// Bench is the make target's name without "make " (bench-hub, bench-failover, ...).
	Bench string `json:"bench"`
	// Commit is the checkout's HEAD, with "-dirty" when tracked files differed from it.
	Commit  string    `json:"commit"`
	Date    time.Time `json:"date"`
	Machine Machine   `json:"machine"`
	// Params are the sizes and settings the run used (clusters, jobs, environment overrides).
	Params map[string]string `json:"params,omitempty"`
	// Peer names what the figures of side "peer" measured, exactly enough to run it again.
	Peer    string   `json:"peer,omitempty"`
	Figures []Figure `json:"figures"`
}

// New starts the record of a run of bench now, on this machine, at the checkout's commit.
func New(bench string) *Record {
	return &Record{Bench: bench, Commit: processCommit(), Date: time.Now().UTC().Truncate(time.Second), Machine: machine(), Params: map[string]string{}}
}

// Add appends a figure.
func (r *Record) Add(side Side, name string, value float64, unit string, n int) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, N: n, Side: side})
}

// Param records a setting of the run.
func (r *Record) Param(name string, value any) { r.Params[name] = fmt.Sprint(value) }

// Latency adds a latency summary of ds in unit (time.Second or time.Millisecond): name+"-p50",
// name+"-p99" only from MinP99Samples samples, and name+"-max", each with the sample count.
func (r *Record) Latency(side Side, name string, unit time.Duration, ds []time.Duration) {
	s := Summarize(ds)
	if s.N == 0 {
		return
	}
	u := UnitName(unit)
	in := func(d time.Duration) float64 { return float64(d) / float64(unit) }
	r.Add(side, name+"-p50", in(s.P50), u, s.N)
	if s.HasP99() {
		r.Add(side, name+"-p99", in(s.P99), u, s.N)
	}
	r.Add(side, name+"-max", in(s.Max), u, s.N)
}

// UnitName is "s" or "ms" (or the duration itself for any other unit).
func UnitName(unit time.Duration) string {
	switch unit {
	case time.Second:
		return "s"
	case time.Millisecond:
		return "ms"
	}
	return unit.String()
}

// Dir is where records go: $FLOTILLA_BENCH_RESULTS, else bench/results/ in the checkout that
// holds the working directory.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "bench", "results"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: set %s to the folder records go to", wd, DirEnv)
		}
	}
}

// FileName is the record's file name: <bench>-<date>-<commit>.json, the date to the second in
// UTC so that repeated runs of one commit each keep their record.
func (r *Record) FileName() string {
	return fmt.Sprintf("%s-%s-%s.json", r.Bench, r.Date.UTC().Format("20060102T150405Z"), r.Commit)
}

// Write writes the record to Dir() and returns its path. A record without figures is an error:
// the benchmark measured nothing.
func (r *Record) Write() (string, error) {
	if len(r.Figures) == 0 {
		return "", fmt.Errorf("record of %s has no figures: the benchmark measured nothing", r.Bench)
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, r.FileName())
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadDir reads every record in dir (a missing dir holds none), oldest first.
func ReadDir(dir string) ([]Record, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r Record
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if r.Bench == "" || len(r.Figures) == 0 {
			return nil, fmt.Errorf("%s: a record needs a bench and at least one figure", p)
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b Record) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.Commit, b.Commit)
	})
	return out, nil
}

// processCommit is the checkout's commit when the process first asked: a benchmark binary is
// built from the tree of its start, and a commit made while it runs is not what it measures.
var processCommit = sync.OnceValue(commit)

// commit is HEAD of the checkout holding the working directory, short, with "-dirty" when
// tracked files differ from it; "unknown" outside a checkout.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "-dirty"
	}
	return c
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	m.MemoryBytes, _ = memTotal()
	m.CPU = cpuModel()
	return m
}

// memTotal is MemTotal from /proc/meminfo, in bytes.
func memTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(fields[1], 10, 64)
			return kib * 1024, err
		}
	}
	return 0, errors.New("no MemTotal in /proc/meminfo")
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
