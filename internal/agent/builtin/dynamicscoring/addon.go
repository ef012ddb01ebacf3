package dynamicscoring

import (
	"context"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/builtinaddon"
)

// Label marks the AddOnPlacementScores the add-on wrote: it updates and deletes only those.
const Label = builtinaddon.Label

// Defaults of AddOn.
const (
	DefaultConfigPoll = 5 * time.Second
	DefaultTimeout    = 10 * time.Second
	// DefaultInterval is the scoring interval when the hub gives none.
	DefaultInterval = 60 * time.Second
	// ValidIntervals is how many intervals a written score stays valid.
	ValidIntervals = 3
)

// AddOn is the dynamic-scoring built-in add-on.
type AddOn struct {
	// ConfigPoll is how often the add-on reads the hub's list of active scorers;
	// DefaultConfigPoll when zero.
	ConfigPoll time.Duration
	// Timeout bounds each request to a source or a scorer; DefaultTimeout when zero.
	Timeout time.Duration
	// Transport carries the requests to sources and scorers; http.DefaultTransport when nil.
	Transport http.RoundTripper
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

func (a AddOn) poll() time.Duration {
	if a.ConfigPoll > 0 {
		return a.ConfigPoll
	}
	return DefaultConfigPoll
}

func (a AddOn) httpClient() *http.Client {
	t := a.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return &http.Client{Timeout: t, Transport: a.Transport}
}

// Run reads the active scorers every ConfigPoll and runs one worker per scorer.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	spoke, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	r := &runner{env: env, spoke: spoke, http: a.httpClient(), workers: map[string]*worker{}}
	defer r.stopAll()
	t := env.Clock.NewTicker(a.poll())
	defer t.Stop()
	for {
		if err := r.sync(ctx); err != nil {
			env.Log.Error(err, "reading the active dynamic scorers")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// runner runs the workers of one Run.
type runner struct {
	env   builtin.Env
	spoke kubernetes.Interface
	http  *http.Client

	mu      sync.Mutex
	workers map[string]*worker
	lastGC  time.Time
}

// worker scores one scorer every interval.
type worker struct {
	summary Summary
	cancel  context.CancelFunc
	done    chan struct{}
}

// sync makes the workers those of the hub's ConfigMap, and deletes the add-on's scores of
// scorers no longer listed once they expired.
func (r *runner) sync(ctx context.Context) error {
	cm := &corev1.ConfigMap{}
	err := r.env.Hub.Get(ctx, client.ObjectKey{Namespace: r.env.ClusterName, Name: ConfigMapName}, cm)
	var summaries []Summary
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		if summaries, err = DecodeSummaries(cm.Data); err != nil {
			return err
		}
	}
	want := map[string]Summary{}
	for _, s := range summaries {
		if s.ScoreName != "" {
			want[s.ScoreName] = s
		}
	}
	r.mu.Lock()
	var stopped []*worker
	for name, w := range r.workers {
		if s, ok := want[name]; !ok || s != w.summary {
			w.cancel()
			stopped = append(stopped, w)
			delete(r.workers, name)
		}
	}
	for name, s := range want {
		if r.workers[name] == nil {
			wctx, cancel := context.WithCancel(ctx)
			w := &worker{summary: s, cancel: cancel, done: make(chan struct{})}
			r.workers[name] = w
			go func() {
				defer close(w.done)
				r.loop(wctx, s)
			}()
		}
	}
	r.mu.Unlock()
	for _, w := range stopped {
		<-w.done
		if _, ok := want[w.summary.ScoreName]; !ok {
			r.markInactive(ctx, w.summary)
		}
	}
	now := r.env.Clock.Now()
	if len(stopped) > 0 || now.Sub(r.lastGC) >= 30*time.Second {
		r.lastGC = now
		return r.collect(ctx, want)
	}
	return nil
}

func (r *runner) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, w := range r.workers {
		w.cancel()
		<-w.done
		delete(r.workers, name)
	}
}

func interval(s Summary) time.Duration {
	if s.ScoringInterval > 0 {
		return time.Duration(s.ScoringInterval) * time.Second
	}
	return DefaultInterval
}

// loop scores at once, then every interval.
func (r *runner) loop(ctx context.Context, s Summary) {
	t := r.env.Clock.NewTicker(interval(s))
	defer t.Stop()
	log := r.env.Log.WithValues("scorer", s.ScorerRef(), "scoreName", s.ScoreName)
	for {
		if err := r.scoreOnce(ctx, s); err != nil && ctx.Err() == nil {
			log.Error(err, "writing the scores")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Cleanup deletes every AddOnPlacementScore the add-on wrote in the cluster's namespace.
func (AddOn) Cleanup(ctx context.Context, env builtin.Env) error {
	r := &runner{env: env}
	return r.collect(ctx, nil)
}
