package agent

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/internal/agent/registration"
)

// testOptions reach servers that are never called: New talks to none, and Run with a context
// that has ended starts no request.
func testOptions() Options {
	o := DefaultOptions()
	o.ClusterName, o.AgentID = "gpu-east", "a1"
	o.Bootstrap = &rest.Config{Host: "https://hub.invalid:6443", BearerToken: "bootstrap"}
	o.Spoke = &rest.Config{Host: "https://spoke.invalid:6443"}
	return o
}

// The flags' defaults: the agent's client rate is OCM's agent's, above client-go's 5 and 10.
func TestDefaultOptions(t *testing.T) {
	o := DefaultOptions()
	if o.QPS != 50 || o.Burst != 100 {
		t.Errorf("DefaultOptions' rate is QPS %g, burst %d, want 50 and 100", o.QPS, o.Burst)
	}
	if o.Clock == nil {
		t.Error("DefaultOptions has no clock")
	}
}

func TestNew(t *testing.T) {
	host, _ := os.Hostname()
	tests := map[string]struct {
		change  func(*Options)
		wantErr string
		check   func(*testing.T, Options)
	}{
		"defaults": {check: func(t *testing.T, o Options) {
			if o.QPS != registration.DefaultQPS || o.Burst != registration.DefaultBurst || o.AgentID != "a1" {
				t.Errorf("options %+v, want the default rate and agent id a1", o)
			}
		}},
		"zero rate takes the defaults": {change: func(o *Options) { o.QPS, o.Burst = 0, 0 }, check: func(t *testing.T, o Options) {
			if o.QPS != registration.DefaultQPS || o.Burst != registration.DefaultBurst {
				t.Errorf("rate QPS %g, burst %d, want the defaults", o.QPS, o.Burst)
			}
		}},
		"a rate of its own": {change: func(o *Options) { o.QPS, o.Burst = 200, 400 }, check: func(t *testing.T, o Options) {
			if o.QPS != 200 || o.Burst != 400 {
				t.Errorf("rate QPS %g, burst %d, want 200 and 400", o.QPS, o.Burst)
			}
		}},
		"agent id from the host name": {change: func(o *Options) { o.AgentID = "" }, check: func(t *testing.T, o Options) {
			if o.AgentID != host {
				t.Errorf("agent id %q, want the host name %q", o.AgentID, host)
			}
		}},
		"no clock": {change: func(o *Options) { o.Clock = nil }, check: func(t *testing.T, o Options) {
			if o.Clock == nil {
				t.Error("no clock: want the real one")
			}
		}},
		"work executor":          {change: func(o *Options) { o.WorkExecutor = "open-cluster-management-agent/flotilla-work" }},
		"negative rate":          {change: func(o *Options) { o.QPS = -1 }, wantErr: "--kube-api-qps -1"},
		"negative burst":         {change: func(o *Options) { o.Burst = -1 }, wantErr: "must not be negative"},
		"work executor not NS/N": {change: func(o *Options) { o.WorkExecutor = "flotilla-work" }, wantErr: `work executor "flotilla-work": give the ServiceAccount as NAMESPACE/NAME`},
		"invalid cluster name":   {change: func(o *Options) { o.ClusterName = "GPU_East" }, wantErr: "not a valid cluster name"},
		"no bootstrap":           {change: func(o *Options) { o.Bootstrap = nil }, wantErr: "bootstrap kubeconfig"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := testOptions()
			if tc.change != nil {
				tc.change(&o)
			}
			a, err := New(o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New: err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.registration == nil || a.fence == nil || a.work == nil || a.addOns == nil {
				t.Fatalf("New left a part out: %+v", a)
			}
			if tc.check != nil {
				tc.check(t, a.opts)
			}
		})
	}
}

func TestValidateExecutor(t *testing.T) {
	for sa, ok := range map[string]bool{
		"open-cluster-management-agent/flotilla-work": true,
		"flotilla-work": false, "/flotilla-work": false, "ns/": false, "ns/a/b": false, "": false,
	} {
		err := ValidateExecutor("--work-executor", sa)
		if (err == nil) != ok {
			t.Errorf("ValidateExecutor(%q) = %v, want ok %v", sa, err, ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), `--work-executor "`+sa+`"`) {
			t.Errorf("ValidateExecutor(%q) = %v, want it to name the flag and the value", sa, err)
		}
	}
	if got := executorUser("open-cluster-management-agent/flotilla-work"); got != "system:serviceaccount:open-cluster-management-agent:flotilla-work" {
		t.Errorf("executorUser = %q", got)
	}
	if got := executorUser(""); got != "" {
		t.Errorf("executorUser(\"\") = %q, want \"\"", got)
	}
}

// An agent whose context has ended stops every part and returns the context's error.
func TestRunStopsWithItsContext(t *testing.T) {
	a, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of its context ending")
	}
}

// waitForEnd is a part that runs until its context ends, counting the parts that stopped.
func waitForEnd(stopped *atomic.Int32) func(context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		stopped.Add(1)
		return ctx.Err()
	}
}

func TestRunAll(t *testing.T) {
	boom := errors.New("boom")
	tests := map[string]struct {
		// first is the part that may stop by itself; nil runs until the context ends.
		first func(context.Context) error
		// cancel ends the parent context.
		cancel  bool
		wantErr string
		wantIs  error
	}{
		"the context ends":           {cancel: true, wantIs: context.Canceled},
		"a part fails":               {first: func(context.Context) error { return boom }, wantErr: "the work agent: boom", wantIs: boom},
		"a part stops without error": {first: func(context.Context) error { return nil }, wantErr: "the work agent: the work agent stopped"},
		"a part fails as ctx ends":   {first: func(ctx context.Context) error { <-ctx.Done(); return boom }, cancel: true, wantIs: context.Canceled},
		"a part returns ctx's error": {first: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, cancel: true, wantIs: context.Canceled},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stopped atomic.Int32
			first := tc.first
			if first == nil {
				first = waitForEnd(&stopped)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- runAll(ctx, []part{
					{"the registration agent", waitForEnd(&stopped)},
					{"the work agent", first},
					{"the add-on agent", waitForEnd(&stopped)},
				})
			}()
			if tc.cancel {
				time.Sleep(10 * time.Millisecond)
				cancel()
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("runAll did not return within 10s")
			}
			if tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Errorf("runAll = %v, want %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("runAll = %v, want one that is %v", err, tc.wantIs)
			}
			want := int32(3) // every part that waits for its context
			if tc.first != nil {
				want = 2
			}
			if got := stopped.Load(); got != want {
				t.Errorf("%d parts stopped when runAll returned, want %d", got, want)
			}
		})
	}
}
