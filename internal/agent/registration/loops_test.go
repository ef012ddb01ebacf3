package registration

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

func testCluster() *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
}

func testRunner(t *testing.T, logs *logRecorder) Runner {
	return Runner{
		Clock: clock.RealClock{}, InitialBackoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond, Values: []any{"cluster", "gpu-east"},
		Log: funcr.NewJSON(func(obj string) { logs.add(t, obj) }, funcr.Options{}),
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
	runUntil(t, testRunner(t, &logRecorder{}), func() bool { return rounds.Load() >= 20 }, hanging, lease)
}

// Failures back off, doubling up to the cap (the runner's or the loop's), and a success starts
// the backoff over. Each failure is logged with the loop, the cluster and the delay.
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
			logs := &logRecorder{}
			var step atomic.Int32
			l := Loop{Name: "lease", Step: func(context.Context) (time.Duration, error) {
				i := int(step.Add(1)) - 1
				if i < len(tc.results) && tc.results[i] {
					return 0, nil
				}
				return 0, &stepError{Step: "renew Lease gpu-east/managed-cluster-lease", Identity: agentIdentity, Server: testHub, Cluster: "gpu-east", Err: errors.New("boom")}
			}}
			if tc.maxBackoff > 0 {
				l.MaxBackoff = func() time.Duration { return tc.maxBackoff }
			}
			runUntil(t, testRunner(t, logs), func() bool { return int(step.Load()) > len(tc.results) }, l)
			var got []time.Duration
			for _, e := range logs.find("could not renew Lease gpu-east/managed-cluster-lease")[:len(tc.want)] {
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

// A loop waiting for its next round starts it as soon as a signal it waits on fires, even one
// fired while its step ran.
func TestRunnerWake(t *testing.T) {
	var creds shared[*HubClients]
	var rounds atomic.Int32
	l := Loop{Name: "acceptance", Wake: []func() <-chan struct{}{creds.Changed}, Step: func(context.Context) (time.Duration, error) {
		if rounds.Add(1) == 1 {
			creds.Set(&HubClients{}) // a change during the step
		}
		return time.Hour, nil
	}}
	runUntil(t, testRunner(t, &logRecorder{}), func() bool { return rounds.Load() >= 2 }, l)
}
