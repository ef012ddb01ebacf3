package dynamicscoring

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
	"github.com/flotilla/flotilla/internal/egress"
)

// Name is the add-on's name.
var Name = builtinaddon.DynamicScoring.Name

// Label marks the AddOnPlacementScores the add-on wrote: it updates and deletes only those.
const Label = builtinaddon.Label

// Defaults of AddOn.
const (
	// DefaultSweep is how often the add-on deletes the expired scores of scorers no longer listed.
	DefaultSweep   = 30 * time.Second
	DefaultTimeout = 10 * time.Second
	// DefaultInterval is the scoring interval when the hub gives none.
	DefaultInterval = 60 * time.Second
	// ValidIntervals is how many intervals a written score stays valid.
	ValidIntervals = 3
)

// AddOn is the dynamic-scoring built-in add-on.
type AddOn struct {
	// Sweep is how often the add-on deletes the expired scores of scorers no longer listed;
	// DefaultSweep when zero. The list of active scorers itself is watched.
	Sweep time.Duration
	// Timeout bounds each request to a source or a scorer; DefaultTimeout when zero.
	Timeout time.Duration
	// AllowLocal lets requests reach loopback and link-local addresses (a local fleet, tests);
	// cloud metadata addresses stay refused. See internal/egress.
	AllowLocal bool
	// Transport carries the requests to sources and scorers (tests); when nil, egress's, which
	// refuses local and metadata addresses after DNS. Redirects are never followed.
	Transport http.RoundTripper
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

func (a AddOn) sweep() time.Duration {
	if a.Sweep > 0 {
		return a.Sweep
	}
	return DefaultSweep
}

func (a AddOn) httpClient() *http.Client {
	t := a.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return egress.Client(t, a.AllowLocal, a.Transport)
}

// Run watches the hub's list of active scorers (the ConfigMap in the cluster's namespace) and
// runs one worker per scorer.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	spoke, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	if env.HubKube == nil {
		return errors.New("the dynamic-scoring add-on needs a hub clientset to watch its ConfigMap")
	}
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	// A watch of the one ConfigMap, by a field selector on its name: all the agent may read.
	lw := toolscache.NewListWatchFromClient(env.HubKube.CoreV1().RESTClient(), "configmaps", env.ClusterName,
		fields.OneTermEqualSelector("metadata.name", scoringwire.ConfigMapName))
	store, informer := toolscache.NewInformerWithOptions(toolscache.InformerOptions{
		ListerWatcher: lw, ObjectType: &corev1.ConfigMap{},
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { poke() }, UpdateFunc: func(_, _ any) { poke() }, DeleteFunc: func(any) { poke() },
		},
	})
	watchCtx, stop := context.WithCancel(ctx)
	var watching sync.WaitGroup
	defer watching.Wait()
	defer stop()
	watching.Go(func() { informer.RunWithContext(watchCtx) })
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil
	}
	config := func() (*corev1.ConfigMap, bool) {
		obj, ok, _ := store.GetByKey(env.ClusterName + "/" + scoringwire.ConfigMapName)
		cm, _ := obj.(*corev1.ConfigMap)
		return cm, ok && cm != nil
	}
	r := &runner{env: env, spoke: spoke, http: a.httpClient(), allowLocal: a.AllowLocal, workers: map[string]*worker{}, config: config, sweep: a.sweep()}
	defer r.stopAll()
	t := env.Clock.NewTicker(a.sweep())
	defer t.Stop()
	for {
		if err := r.sync(ctx); err != nil {
			env.Log.Error(err, "reading the active dynamic scorers")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-t.C():
		}
	}
}

// runner runs the workers of one Run.
type runner struct {
	env   builtin.Env
	spoke kubernetes.Interface
	http  *http.Client
	// allowLocal lets requests reach loopback and link-local addresses.
	allowLocal bool

	// config returns the hub's ConfigMap of active scorers, from the watch.
	config func() (*corev1.ConfigMap, bool)
	// sweep is how often expired scores of scorers no longer listed are deleted.
	sweep time.Duration

	mu      sync.Mutex
	workers map[string]*worker
	lastGC  time.Time
}

// worker scores one scorer every interval.
type worker struct {
	summary scoringwire.Summary
	cancel  context.CancelFunc
	done    chan struct{}
}

// sync makes the workers those of the hub's ConfigMap, and deletes the add-on's scores of
// scorers no longer listed once they expired.
func (r *runner) sync(ctx context.Context) error {
	var summaries []scoringwire.Summary
	if cm, ok := r.config(); ok {
		var err error
		if summaries, err = scoringwire.DecodeSummaries(cm.Data); err != nil {
			return err
		}
	}
	want := map[string]scoringwire.Summary{}
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
	if len(stopped) > 0 || now.Sub(r.lastGC) >= r.sweep {
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

// interval is the summary's scoring interval, at most scoringwire.MaxSeconds: the hub refuses longer
// ones, and the agent does not let a longer one wrap the Duration around and panic its ticker.
func interval(s scoringwire.Summary) time.Duration {
	if s.ScoringInterval > 0 {
		return time.Duration(min(s.ScoringInterval, scoringwire.MaxSeconds)) * time.Second
	}
	return DefaultInterval
}

// loop scores at once, then every interval.
func (r *runner) loop(ctx context.Context, s scoringwire.Summary) {
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
