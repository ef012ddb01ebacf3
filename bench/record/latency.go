package record

import (
	"fmt"
	"slices"
	"time"
)

// MinP99Samples is the fewest samples whose nearest-rank 99th percentile is not their maximum.
// Below it a "p99" is the maximum under another name, so no summary, log line or record gives
// one: they give the maximum and the sample count.
const MinP99Samples = 100

// Summary is a latency summary of samples: nearest-rank p50 and p99, the maximum, the count.
type Summary struct {
	N             int
	P50, P99, Max time.Duration
}

// HasP99 says whether the samples are enough for a p99 that is not their maximum.
func (s Summary) HasP99() bool { return s.N >= MinP99Samples }

// Summarize summarizes ds; P99 stays zero below MinP99Samples.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	out := Summary{N: len(s), P50: Percentile(s, 50), Max: Percentile(s, 100)}
	if out.HasP99() {
		out.P99 = Percentile(s, 99)
	}
	return out
}

// Percentile is the p-th percentile (nearest rank) of ds; zero for no samples. Callers that print a p99 go through Summarize, which knows when not to.
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := (p*len(s) + 99) / 100
	return s[max(k, 1)-1]
}

// round rounds d for reading: to the millisecond from 10 ms, else to 10 µs.
func round(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// String is "p50 X, p99 Y, max Z of N samples", or without the p99 below MinP99Samples.
func (s Summary) String() string {
	if s.N == 0 {
		return "no samples"
	}
	out := "p50 " + round(s.P50).String()
	if s.HasP99() {
		out += ", p99 " + round(s.P99).String()
	} else {
		out += fmt.Sprintf(" (too few samples for a p99, %d needed)", MinP99Samples)
	}
	return out + fmt.Sprintf(", max %s of %d samples", round(s.Max), s.N)
}

// Tail is the summary's tail as a table cell names it: "p99 Y (n=N)" from MinP99Samples
// samples, else "max Z (n=N)".
func (s Summary) Tail() string {
	if s.N == 0 {
		return "no samples"
	}
	if s.HasP99() {
		return fmt.Sprintf("p99 %s (n=%d)", round(s.P99), s.N)
	}
	return fmt.Sprintf("max %s (n=%d)", round(s.Max), s.N)
}
