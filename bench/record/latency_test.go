package record

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ms(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(n-i) * time.Millisecond // unsorted on purpose
	}
	return out
}

func TestSummarize(t *testing.T) {
	cases := map[string]struct {
		ds       []time.Duration
		want     string
		wantTail string
	}{
		"none": {nil, "no samples", "no samples"},
		// 41 and 6 (the failover test's jobs on the cut worker), 20 (bench-mcp's calls) and 80
		// (bench-queue's jobs): the nearest-rank p99 is the maximum, so there is none.
		"6: no p99":              {ms(6), "p50 3ms (too few samples for a p99, 100 needed), max 6ms of 6 samples", "max 6ms (n=6)"},
		"20: no p99":             {ms(20), "p50 10ms (too few samples for a p99, 100 needed), max 20ms of 20 samples", "max 20ms (n=20)"},
		"41: no p99":             {ms(41), "p50 21ms (too few samples for a p99, 100 needed), max 41ms of 41 samples", "max 41ms (n=41)"},
		"99: still the max":      {ms(99), "p50 50ms (too few samples for a p99, 100 needed), max 99ms of 99 samples", "max 99ms (n=99)"},
		"100: p99 below the max": {ms(100), "p50 50ms, p99 99ms, max 100ms of 100 samples", "p99 99ms (n=100)"},
		"200":                    {ms(200), "p50 100ms, p99 198ms, max 200ms of 200 samples", "p99 198ms (n=200)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := Summarize(tc.ds)
			if got := s.String(); got != tc.want {
				t.Errorf("String = %q, want %q", got, tc.want)
			}
			if got := s.Tail(); got != tc.wantTail {
				t.Errorf("Tail = %q, want %q", got, tc.wantTail)
			}
			if s.N < MinP99Samples && s.P99 != 0 {
				t.Errorf("P99 = %s from %d samples, want none", s.P99, s.N)
			}
		})
	}
	// The premise: below MinP99Samples the nearest-rank p99 is the max; at it, it is not.
	for n := 1; n <= MinP99Samples; n++ {
		if isMax := Percentile(ms(n), 99) == Percentile(ms(n), 100); isMax != (n < MinP99Samples) {
			t.Errorf("%d samples: p99 == max is %t, want %t", n, isMax, n < MinP99Samples)
		}
	}
}

func TestRecordLatency(t *testing.T) {
	cases := map[string]struct {
		ds   []time.Duration
		want []Figure
	}{
		"none": {},
		"41 samples: p50 and max": {ms(41), []Figure{
			{Name: "moved-p50", Value: 0.021, Unit: "s", N: 41, Side: Peer},
			{Name: "moved-max", Value: 0.041, Unit: "s", N: 41, Side: Peer},
		}},
		"100 samples: p50, p99 and max": {ms(100), []Figure{
			{Name: "moved-p50", Value: 0.05, Unit: "s", N: 100, Side: Peer},
			{Name: "moved-p99", Value: 0.099, Unit: "s", N: 100, Side: Peer},
			{Name: "moved-max", Value: 0.1, Unit: "s", N: 100, Side: Peer},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &Record{}
			r.Latency(Peer, "moved", time.Second, tc.ds)
			if diff := cmp.Diff(tc.want, r.Figures); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
		})
	}
}
