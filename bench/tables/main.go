// Command tables regenerates the tables of bench/README.md from the records in bench/results/
// (bench/record): each table sits between `<!-- records BENCH -->` and `<!-- /records -->` and
// lists every record of BENCH, its figures with unit, n and side, and their mean and spread over
// the runs. A figure in those tables is one a run wrote, never one copied by hand.
//
//	go run ./bench/tables             rewrite bench/README.md
//	go run ./bench/tables -check      fail if it differs from what the records give
//	go run ./bench/tables -verify DIR fail unless every benchmark left a record with figures in
//	                                  DIR (make bench-smoke)
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	readme := flag.String("readme", "bench/README.md", "the file whose tables are regenerated")
	results := flag.String("results", "bench/results", "the records' folder")
	check := flag.Bool("check", false, "only check that the tables match the records")
	verify := flag.String("verify", "", "check that every benchmark of -sources left a record with figures in this folder")
	sources := flag.String("sources", "bench,test/dashboard", "comma-separated folders whose Benchmark functions -verify expects records of")
	flag.Parse()
	if err := run(*readme, *results, *check, *verify, *sources); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(readme, results string, check bool, verify, sources string) error {
	if verify != "" {
		return verifyRecords(verify, sources)
	}
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	got, err := regenerate(string(old), results)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	if got == string(old) {
		return nil
	}
	if check {
		return fmt.Errorf("%s: the tables differ from the records in %s: run go run ./bench/tables", readme, results)
	}
	return os.WriteFile(readme, []byte(got), 0o644)
}
