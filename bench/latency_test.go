package bench

// Latency statistics, honest about their samples: the nearest-rank 99th percentile of fewer than
// 100 samples is their maximum, so below that no "p99" is printed or reported, and every summary
// and report carries its sample count. Not build-tagged: its test runs with the unit tests.

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// minP99Samples is the fewest samples whose nearest-rank 99th percentile is not their maximum.
const minP99Samples = 100

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	k := (p*len(s) + 99) / 100
	return s[max(k, 1)-1].Round(time.Millisecond)
}

// latencySummary is "p50 X, p99 Y, max Z of N samples", without the p99 below minP99Samples
// (it would be the max again under another name).
func latencySummary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	s := "p50 " + percentile(ds, 50).String()
	if len(ds) >= minP99Samples {
		s += ", p99 " + percentile(ds, 99).String()
	} else {
		s += fmt.Sprintf(" (too few samples for a p99, %d needed)", minP99Samples)
	}
	return s + fmt.Sprintf(", max %s of %d samples", percentile(ds, 100), len(ds))
}

// reportLatency reports ds as benchmark metrics in unit (time.Second or time.Millisecond, named
// "s" or "ms"): name("p50"), name("p99") only with minP99Samples or more, name("max"), and the
// sample count as name("samples") with the unit left out.
func reportLatency(b *testing.B, ds []time.Duration, unit time.Duration, name func(stat string) string) {
	if len(ds) == 0 {
		return
	}
	u := map[time.Duration]string{time.Second: "s", time.Millisecond: "ms"}[unit]
	b.ReportMetric(float64(percentile(ds, 50))/float64(unit), u+"-"+name("p50"))
	if len(ds) >= minP99Samples {
		b.ReportMetric(float64(percentile(ds, 99))/float64(unit), u+"-"+name("p99"))
	}
	b.ReportMetric(float64(percentile(ds, 100))/float64(unit), u+"-"+name("max"))
	b.ReportMetric(float64(len(ds)), name("samples"))
}

func TestLatencySummary(t *testing.T) {
	ms := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(i+1) * time.Millisecond
		}
		return out
	}
	cases := map[string]struct {
		ds   []time.Duration
		want string
	}{
		"none": {nil, "no samples"},
		// 40 rounds (BenchmarkGPUPlacementLatency's old default): the nearest-rank p99 is
		// sample 40, the max, so there is no p99.
		"40: no p99":             {ms(40), "p50 20ms (too few samples for a p99, 100 needed), max 40ms of 40 samples"},
		"99: still the max":      {ms(99), "p50 50ms (too few samples for a p99, 100 needed), max 99ms of 99 samples"},
		"100: p99 below the max": {ms(100), "p50 50ms, p99 99ms, max 100ms of 100 samples"},
		"200":                    {ms(200), "p50 100ms, p99 198ms, max 200ms of 200 samples"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := latencySummary(tc.ds); got != tc.want {
				t.Errorf("latencySummary = %q, want %q", got, tc.want)
			}
		})
	}
	// The premise: below minP99Samples the nearest-rank p99 is the max; at it, it is not.
	for n := 1; n <= minP99Samples; n++ {
		if isMax := percentile(ms(n), 99) == percentile(ms(n), 100); isMax != (n < minP99Samples) {
			t.Errorf("%d samples: p99 == max is %t, want %t", n, isMax, n < minP99Samples)
		}
	}
}
