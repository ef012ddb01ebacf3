// Package bench holds Flotilla's benchmarks. Each starts a record (startRecord) and reports
// through report, so every figure it prints is also kept in bench/results/ with its unit, n and
// side (bench/record); bench/README.md's tables are generated from those records. Each runs at a
// tiny size with FLOTILLA_BENCH_SMOKE=1 (make bench-smoke, in make test). No test asserts on time.
package bench
