package loop

import (
	"context"
	"errors"
	"github.com/flotilla/flotilla/internal/logtest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/utils/clock"
)

// explainStep is an Explain as a caller gives one: a sentence made from the step's error.
func explainStep(err error) string { return "could not " + err.Error() }

func testRunner(t *testing.T, logs *logtest.Recorder) Runner {
	return Runner{
		Clock: clock.RealClock{}, InitialBackoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond, Values: []any{"cluster", "gpu-east"},
		Log:     logs.Logger(t, funcr.Options{}),
		Explain: explainStep,
	}
}

// runUntil runs loops until done reports true (or 10 s pass) and returns once they stopped.
func runUntil(t *testing.T, r Runner, done func() bool, loops ...Loop) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(ctx, loops...) }()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("the loops did not get there within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5s of its context ending")
	}
}

// A loop whose step hangs does not hold up the others.
func TestRunnerHangingLoopDoesNotDelayOthers(t *testing.T) {
	var rounds atomic.Int32
	hanging := Loop{Name: "inventory", Step: func(ctx context.Context) (time.Duration, error) {
		<-ctx.Done() // a spoke that never answers
		return 0, ctx.Err()
	}}
	lease := Loop{Name: "lease", Step: func(context.Context) (time.Duration, error) {
		rounds.Add(1)
		return time.Millisecond, nil
	}}
	runUntil(t, testRunner(t, &logtest.Recorder{}), func() bool { return rounds.Load() >= 20 }, hanging, lease)
}

// Failures back off, doubling up to the cap (the runner's or the loop's), and a success starts
// the backoff over. Each failure is logged, explained, with the loop, the cluster and the delay.
func TestRunnerBackoff(t *testing.T) {
	tests := map[string]struct {
		results    []bool // the steps' outcomes, true for success
		maxBackoff time.Duration
		want       []time.Duration
	}{
		"doubling to the runner's cap": {results: []bool{false, false, false, false, false}, want: []time.Duration{1, 2, 4, 8, 8}},
		"capped by the loop":           {results: []bool{false, false, false, false}, maxBackoff: 3 * time.Millisecond, want: []time.Duration{1, 2, 3, 3}},
		"a success starts over":        {results: []bool{false, false, false, true, false, false}, want: []time.Duration{1, 2, 4, 1, 2}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logs := &logtest.Recorder{}
			var step atomic.Int32
			l := Loop{Name: "lease", Step: func(context.Context) (time.Duration, error) {
				i := int(step.Add(1)) - 1
				if i < len(tc.results) && tc.results[i] {
					return 0, nil
				}
				return 0, errors.New("renew Lease gpu-east/managed-cluster-lease: boom")
			}}
			if tc.maxBackoff > 0 {
				l.MaxBackoff = func() time.Duration { return tc.maxBackoff }
			}
			runUntil(t, testRunner(t, logs), func() bool { return int(step.Load()) > len(tc.results) }, l)
			var got []time.Duration
			for _, e := range logs.Find("could not renew Lease gpu-east/managed-cluster-lease")[:len(tc.want)] {
				if e["loop"] != "lease" || e["cluster"] != "gpu-east" || e["error"] == nil {
					t.Errorf("failure logged without the loop, the cluster or the error: %v", e)
				}
				d, err := time.ParseDuration(e["retryIn"].(string))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, d)
			}
			for i, d := range got {
				// Up to 10% jitter, and the log rounds to milliseconds.
				if base := tc.want[i] * time.Millisecond; d < base || d > base+base/10+time.Millisecond/2 {
					t.Errorf("delay after failure %d = %s, want %s plus up to 10%%; all: %v", i+1, d, base, got)
				}
			}
		})
	}
}

// Without Explain, a failure is logged with the error's own text.
func TestRunnerWithoutExplain(t *testing.T) {
	logs := &logtest.Recorder{}
	r := testRunner(t, logs)
	r.Explain = nil
	var step atomic.Int32
	l := Loop{Name: "fence", Step: func(context.Context) (time.Duration, error) {
		step.Add(1)
		return 0, errors.New("listing Jobs: boom")
	}}
	runUntil(t, r, func() bool { return step.Load() >= 2 }, l)
	failures := logs.Find("listing Jobs: boom")
	if len(failures) == 0 || failures[0]["msg"] != "listing Jobs: boom" || failures[0]["loop"] != "fence" {
		t.Errorf("failures logged %v, want the error's text as the message, with the loop", logs.Find(""))
	}
}

// signal is a holder's change signal: Changed returns a channel that closes at the next fire.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// A loop waiting for its next round starts it as soon as a signal it waits on fires, even one
// fired while its step ran.
func TestRunnerWake(t *testing.T) {
	var creds signal
	var rounds atomic.Int32
	l := Loop{Name: "acceptance", Wake: []func() <-chan struct{}{creds.Changed}, Step: func(context.Context) (time.Duration, error) {
		if rounds.Add(1) == 1 {
			creds.fire() // a change during the step
		}
		return time.Hour, nil
	}}
	runUntil(t, testRunner(t, &logtest.Recorder{}), func() bool { return rounds.Load() >= 2 }, l)
}
