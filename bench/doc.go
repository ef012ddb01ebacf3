// Package bench holds Flotilla's benchmarks: start-up time and memory of local fleets now, and
// the scheduler and hub benchmarks as they arrive. Results and the commands that produce them
// are recorded in bench/README.md; no test asserts on time.
package bench
