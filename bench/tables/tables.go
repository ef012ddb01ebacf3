package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flotilla/flotilla/bench/record"
)

// block is one generated table: `<!-- records BENCH -->`, the table, `<!-- /records -->`.
var block = regexp.MustCompile(`(?s)(<!-- records ([a-z0-9-]+) -->\n).*?(<!-- /records -->)`)

// regenerate returns doc with every block's table made again from the records in dir. Records
// of smoke runs are left out: they prove a benchmark runs, not what it measures.
func regenerate(doc, dir string) (string, error) {
	recs, err := record.ReadDir(dir)
	if err != nil {
		return "", err
	}
	byBench := map[string][]record.Record{}
	for _, r := range recs {
		if r.Params["smoke"] == "" {
			byBench[r.Bench] = append(byBench[r.Bench], r)
		}
	}
	seen := map[string]bool{}
	out := block.ReplaceAllStringFunc(doc, func(m string) string {
		sub := block.FindStringSubmatch(m)
		seen[sub[2]] = true
		return sub[1] + render(sub[2], byBench[sub[2]]) + sub[3]
	})
	var orphans []string
	for b := range byBench {
		if !seen[b] {
			orphans = append(orphans, b)
		}
	}
	if len(orphans) > 0 {
		sort.Strings(orphans)
		return "", fmt.Errorf("records of %v have no `<!-- records BENCH -->` block: add one where the benchmark is described", orphans)
	}
	return out, nil
}

// render is the table of one benchmark's records, oldest run first.
func render(bench string, recs []record.Record) string {
	if len(recs) == 0 {
		return fmt.Sprintf("No record yet: `make %s` writes one to bench/results/, and `go run ./bench/tables` puts it here.\n", bench)
	}
	var sb strings.Builder
	sb.WriteString("Generated from bench/results/ by `go run ./bench/tables`; do not edit.\n\n")
	sb.WriteString("| run | date (UTC) | commit | machine | parameters |\n|---|---|---|---|---|\n")
	for i, r := range recs {
		fmt.Fprintf(&sb, "| %d | %s | %s | %d cores, %.1f GiB | %s |\n", i+1, r.Date.UTC().Format("2006-01-02 15:04"), r.Commit,
			r.Machine.Cores, float64(r.Machine.MemoryBytes)/(1<<30), params(r.Params))
	}
	if peer := peers(recs); peer != "" {
		sb.WriteString("\nPeer: " + peer + "\n")
	}
	type key struct {
		side record.Side
		name string
	}
	var keys []key
	vals := map[key][]*record.Figure{}
	for i := range recs {
		for j := range recs[i].Figures {
			f := &recs[i].Figures[j]
			k := key{f.Side, f.Name}
			if vals[k] == nil {
				keys = append(keys, k)
				vals[k] = make([]*record.Figure, len(recs))
			}
			vals[k][i] = f
		}
	}
	sb.WriteString("\n| figure | side | unit |")
	for i := range recs {
		fmt.Fprintf(&sb, " run %d |", i+1)
	}
	sb.WriteString(" mean | spread (min to max) |\n|---|---|---|" + strings.Repeat("---|", len(recs)+2) + "\n")
	for _, k := range keys {
		var xs []float64
		unit := ""
		fmt.Fprintf(&sb, "| %s | %s |", k.name, k.side)
		var cells strings.Builder
		for _, f := range vals[k] {
			if f == nil {
				cells.WriteString(" |")
				continue
			}
			unit = f.Unit
			xs = append(xs, f.Value)
			fmt.Fprintf(&cells, " %s (n=%d) |", num(f.Value), f.N)
		}
		fmt.Fprintf(&sb, " %s |%s", unit, cells.String())
		if len(xs) < 2 {
			sb.WriteString(" | |\n")
			continue
		}
		var sum float64
		for _, x := range xs {
			sum += x
		}
		fmt.Fprintf(&sb, " %s (%d runs) | %s to %s |\n", num(sum/float64(len(xs))), len(xs), num(slices.Min(xs)), num(slices.Max(xs)))
	}
	return sb.String()
}

// params is a record's parameters, sorted, without the benchmark's Go name.
func params(p map[string]string) string {
	var out []string
	for k, v := range p {
		if k != "benchmark" {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return strings.ReplaceAll(strings.Join(out, ", "), "|", `\|`)
}

// peers is the peers the records name, one per distinct name.
func peers(recs []record.Record) string {
	var out []string
	for _, r := range recs {
		if r.Peer != "" && !slices.Contains(out, r.Peer) {
			out = append(out, r.Peer)
		}
	}
	return strings.Join(out, "; ")
}

// num prints a figure with about four significant digits, without an exponent.
func num(x float64) string {
	a := math.Abs(x)
	prec := 3
	switch {
	case a >= 1000 || x == math.Trunc(x):
		prec = 0
	case a >= 100:
		prec = 1
	case a >= 1:
		prec = 2
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// benchFunc finds the benchmarks a folder's Go files define.
var benchFunc = regexp.MustCompile(`(?m)^func (Benchmark\w+)\(b \*testing\.B\)`)

// verifyRecords checks that every benchmark under sources left a record with figures, each
// with a side and a positive n, in dir.
func verifyRecords(dir, sources string) error {
	recs, err := record.ReadDir(dir)
	if err != nil {
		return err
	}
	got := map[string]record.Record{}
	for _, r := range recs {
		got[r.Params["benchmark"]] = r
	}
	var want []string
	for src := range strings.SplitSeq(sources, ",") {
		files, err := filepath.Glob(filepath.Join(src, "*.go"))
		if err != nil {
			return err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			for _, m := range benchFunc.FindAllStringSubmatch(string(data), -1) {
				want = append(want, m[1])
			}
		}
	}
	sort.Strings(want)
	var problems []string
	for _, b := range want {
		r, ok := got[b]
		if !ok {
			problems = append(problems, b+": no record (did it run to the end and write its record?)")
			continue
		}
		for _, f := range r.Figures {
			if f.N < 1 || (f.Side != record.Flotilla && f.Side != record.Peer) {
				problems = append(problems, fmt.Sprintf("%s: figure %s has n=%d, side %q", b, f.Name, f.N, f.Side))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the smoke pass's records in %s:\n  %s", dir, strings.Join(problems, "\n  "))
	}
	fmt.Printf("%d benchmarks, each with a record with figures, in %s: %s\n", len(want), dir, strings.Join(want, ", "))
	return nil
}
