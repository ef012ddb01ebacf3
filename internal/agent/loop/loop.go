package loop

import (
	"context"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// Loop is one of an agent's controllers.
type Loop struct {
	// Name names the loop in the log, such as "lease".
	Name string
	// Step does one round of the loop's work and says how long to wait before the next. A step
	// that fails is logged once, with what would fix it (Runner.Explain), and the next round
	// follows after the loop's backoff, which starts over after a step that succeeds.
	Step func(ctx context.Context) (next time.Duration, err error)
	// Wake lists signals that start the next round early, such as registration.HubAccess.Changed.
	// The runner takes them before each step, so a change made while the step runs is not missed.
	Wake []func() <-chan struct{}
	// MaxBackoff, when set, caps the backoff below the runner's at each failure: the lease loop
	// retries at least once a lease period.
	MaxBackoff func() time.Duration
}

// Runner runs loops side by side until its context ends.
type Runner struct {
	Clock clock.WithTicker
	// Log gets each failure, with the loop's name and the delay before the next round.
	Log logr.Logger
	// Explain turns a failed step's error into the failure's log message, a sentence that says
	// what would fix it (the registration agent's explains its steps' failures); the error's own
	// text when nil. The error is logged as well.
	Explain func(error) string
	// InitialBackoff and MaxBackoff bound the wait after a failed step: it starts at
	// InitialBackoff, doubles with each failure up to MaxBackoff, and adds up to 10% jitter.
	InitialBackoff, MaxBackoff time.Duration
	// Values are logged with every failure, such as the cluster's name.
	Values []any
}

// Run runs the loops until ctx ends, then waits for them and returns ctx's error.
func (r Runner) Run(ctx context.Context, loops ...Loop) error {
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(ctx, l)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

func (r Runner) backoff() wait.Backoff {
	return wait.Backoff{Duration: r.InitialBackoff, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: r.MaxBackoff}
}

func (r Runner) explain(err error) string {
	if r.Explain == nil {
		return err.Error()
	}
	return r.Explain(err)
}

func (r Runner) run(ctx context.Context, l Loop) {
	backoff := r.backoff()
	for ctx.Err() == nil {
		wakes := make([]<-chan struct{}, 0, len(l.Wake))
		for _, w := range l.Wake {
			wakes = append(wakes, w())
		}
		next, err := l.Step(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			next = backoff.Step()
			if l.MaxBackoff != nil {
				next = min(next, l.MaxBackoff())
			}
			r.Log.Error(err, r.explain(err), append(append([]any{}, r.Values...), "loop", l.Name, "retryIn", next.Round(time.Millisecond).String())...)
		} else {
			backoff = r.backoff()
		}
		r.wait(ctx, next, wakes)
	}
}

// wait returns after d, when ctx ends or when one of wakes closes.
func (r Runner) wait(ctx context.Context, d time.Duration, wakes []<-chan struct{}) {
	if d <= 0 {
		return
	}
	timer := r.Clock.NewTimer(d)
	defer timer.Stop()
	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C())},
	}
	for _, w := range wakes {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w)})
	}
	reflect.Select(cases)
}
