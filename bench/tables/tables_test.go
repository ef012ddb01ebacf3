package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/bench/record"
)

// TestREADMEMatchesRecords: every generated table of bench/README.md is what the records in
// bench/results/ give, and every benchmark with records has a table.
func TestREADMEMatchesRecords(t *testing.T) {
	doc, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := regenerate(string(doc), "../results")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(doc), got); diff != "" {
		t.Errorf("bench/README.md's tables differ from bench/results/ (-README +records); run go run ./bench/tables:\n%s", diff)
	}
}

func rec(date string, commit string, figs ...record.Figure) record.Record {
	d, _ := time.Parse(time.RFC3339, date)
	return record.Record{Bench: "bench-x", Commit: commit, Date: d, Machine: record.Machine{Cores: 2, MemoryBytes: 24 << 30},
		Params: map[string]string{"benchmark": "BenchmarkX", "jobs": "50"}, Figures: figs}
}

func TestRender(t *testing.T) {
	fl := func(name string, v float64, unit string, n int) record.Figure {
		return record.Figure{Name: name, Value: v, Unit: unit, N: n, Side: record.Flotilla}
	}
	peer := func(name string, v float64, unit string, n int) record.Figure {
		return record.Figure{Name: name, Value: v, Unit: unit, N: n, Side: record.Peer}
	}
	cases := map[string]struct {
		recs []record.Record
		want string
	}{
		"none": {want: "No record yet: `make bench-x` writes one to bench/results/, and `go run ./bench/tables` puts it here.\n"},
		"one run": {recs: []record.Record{rec("2026-12-05T14:52:58Z", "abc", fl("moved-max", 86.568, "s", 6))}, want: `Generated from bench/results/ by ` + "`go run ./bench/tables`" + `; do not edit.

| run | date (UTC) | commit | machine | parameters |
|---|---|---|---|---|
| 1 | 2026-12-05 14:52 | abc | 2 cores, 24.0 GiB | jobs=50 |

| figure | side | unit | run 1 | mean | spread (min to max) |
|---|---|---|---|---|---|
| moved-max | flotilla | s | 86.57 (n=6) | | |
`},
		"three runs, both sides, a figure missing from one": {recs: []record.Record{
			rec("2026-12-05T10:00:00Z", "abc", fl("concurrent", 0, "jobs", 41), peer("concurrent", 40, "jobs", 47)),
			rec("2026-12-05T11:00:00Z", "abc", fl("concurrent", 0, "jobs", 40), peer("concurrent", 45, "jobs", 45)),
			rec("2026-12-05T12:00:00Z", "def", peer("concurrent", 44, "jobs", 46)),
		}, want: `Generated from bench/results/ by ` + "`go run ./bench/tables`" + `; do not edit.

| run | date (UTC) | commit | machine | parameters |
|---|---|---|---|---|
| 1 | 2026-12-05 10:00 | abc | 2 cores, 24.0 GiB | jobs=50 |
| 2 | 2026-12-05 11:00 | abc | 2 cores, 24.0 GiB | jobs=50 |
| 3 | 2026-12-05 12:00 | def | 2 cores, 24.0 GiB | jobs=50 |

| figure | side | unit | run 1 | run 2 | run 3 | mean | spread (min to max) |
|---|---|---|---|---|---|---|---|
| concurrent | flotilla | jobs | 0 (n=41) | 0 (n=40) | | 0 (2 runs) | 0 to 0 |
| concurrent | peer | jobs | 40 (n=47) | 45 (n=45) | 44 (n=46) | 43 (3 runs) | 40 to 45 |
`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render("bench-x", tc.recs)); diff != "" {
				t.Errorf("render (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegenerate(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(record.DirEnv, dir)
	r := record.New("bench-x")
	r.Add(record.Flotilla, "ready", 1.5, "s", 1)
	if _, err := r.Write(); err != nil {
		t.Fatal(err)
	}
	smoke := record.New("bench-x")
	smoke.Bench, smoke.Commit = "bench-x", "smoke"
	smoke.Param("smoke", true)
	smoke.Add(record.Flotilla, "ready", 99, "s", 1)
	if _, err := smoke.Write(); err != nil {
		t.Fatal(err)
	}
	doc := "# B\n\n<!-- records bench-x -->\nhand-edited\n<!-- /records -->\n\ntext\n"
	got, err := regenerate(doc, dir)
	if err != nil {
		t.Fatal(err)
	}
	// The smoke run would be a second run (its 99 s is no test: "99" can be in a commit's hash).
	if strings.Contains(got, "hand-edited") || !strings.Contains(got, "| ready | flotilla | s | 1.50 (n=1) |") || strings.Contains(got, "run 2") {
		t.Errorf("regenerate gave:\n%s\nwant the hand edit replaced by the record's figure, the smoke run left out", got)
	}
	if _, err := regenerate("# no blocks\n", dir); err == nil || !strings.Contains(err.Error(), "bench-x") {
		t.Errorf("regenerate of a document without bench-x's block: %v, want an error naming it", err)
	}
}

func TestVerifyRecords(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	t.Setenv(record.DirEnv, dir)
	if err := os.WriteFile(filepath.Join(src, "a_test.go"), []byte("package a\n\nfunc BenchmarkA(b *testing.B) {}\n\nfunc BenchmarkB(b *testing.B) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := record.New("bench-a")
	r.Param("benchmark", "BenchmarkA")
	r.Add(record.Flotilla, "ready", 1, "s", 1)
	if _, err := r.Write(); err != nil {
		t.Fatal(err)
	}
	err := verifyRecords(dir, src)
	if err == nil || !strings.Contains(err.Error(), "BenchmarkB: no record") || strings.Contains(err.Error(), "BenchmarkA") {
		t.Errorf("verifyRecords = %v, want BenchmarkB alone named as without a record", err)
	}
}
