package work

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

// DefaultResync is how often a work is looked at again without an event, as OCM's status resync.
const DefaultResync = 10 * time.Second

// Hub gives the agent's current hub credentials (registration.HubAccess).
type Hub = registration.Credentials

var _ Hub = (*registration.HubAccess)(nil)

// Options configures the work agent.
type Options struct {
	// ClusterName is the cluster's name, and its namespace on the hub.
	ClusterName string
	AgentID     string
	// Hub is the registration agent's hub credentials; the work agent follows their renewals.
	Hub Hub
	// Spoke reaches the managed cluster. Its identity applies the works (it needs the rights of
	// whatever they carry, as OCM's agent) and impersonates their executors (the verb impersonate
	// on serviceaccounts).
	Spoke *rest.Config
	// QPS and Burst limit the agent's requests to the hub, and to the spoke unless Spoke sets a
	// rate of its own; registration.DefaultQPS and registration.DefaultBurst when zero.
	QPS   float32
	Burst int
	// Resync is DefaultResync when zero.
	Resync time.Duration
	// Workers is how many works are applied at once; 4 when zero.
	Workers int
	// HubHash names the hub on the spoke, in the AppliedManifestWorks' names and spec; empty
	// means HubHash of the hub's address, as OCM's agent. Agents of different clusters that share
	// one spoke API server (simulated fleets, benchmarks) need a hash each: a work's
	// AppliedManifestWork is named after the hub and the work only.
	HubHash string
	Clock   clock.Clock
	Log     logr.Logger
	// Fence, when set, holds back fenced works while it is raised (internal/agent/fence).
	Fence Fence
	// DefaultExecutor, when set (the user name of a ServiceAccount,
	// system:serviceaccount:NAMESPACE:NAME), applies, reads and removes the manifests of works
	// without an executor by impersonating it: the restricted mode, in which the agent's own
	// identity never applies a manifest, so a work reaches only what that account's role grants.
	// Empty is OCM's mode: the agent's identity applies such works, and removes every work's
	// objects, with all the agent may do.
	DefaultExecutor string
}

// Fence is the agent's fence as the work agent sees it.
type Fence interface {
	// Fenced says whether the fence is raised: no fenced work is applied then.
	Fenced() bool
	// Episodes counts the fences lowered: after each, a fenced work is read from the hub past
	// the cache before it is applied again, so that a work the hub removed during the outage is
	// not applied from a stale cache.
	Episodes() int64
}

// Agent applies the ManifestWorks of its cluster to the spoke.
type Agent struct{ opts Options }

// New checks the options and returns a work agent.
func New(opts Options) (*Agent, error) {
	if opts.ClusterName == "" || opts.Hub == nil || opts.Spoke == nil {
		return nil, errors.New("the work agent needs a cluster name, the registration agent's hub credentials and a spoke kubeconfig")
	}
	if opts.DefaultExecutor != "" {
		if _, _, ok := serviceAccountUser(opts.DefaultExecutor); !ok {
			return nil, fmt.Errorf("work executor %q: give the ServiceAccount as system:serviceaccount:NAMESPACE:NAME", opts.DefaultExecutor)
		}
	}
	if opts.QPS <= 0 {
		opts.QPS = registration.DefaultQPS
	}
	if opts.Burst <= 0 {
		opts.Burst = registration.DefaultBurst
	}
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Agent{opts: opts}, nil
}

// retryAfter is the wait before a work controller that stopped on an error starts again.
const retryAfter = 5 * time.Second

// Run applies works until ctx ends. It runs one controller with the current hub credentials and
// starts it again when they change (a renewed certificate, a new registration); the controller
// starting again reads every work, finds its objects in place and writes nothing.
func (a *Agent) Run(ctx context.Context) error {
	for {
		changed := a.opts.Hub.Changed()
		cur := a.opts.Hub.Current()
		if cur == nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-changed:
				continue
			}
		}
		runCtx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { errc <- a.run(runCtx, cur.Config) }()
		select {
		case <-ctx.Done():
			cancel()
			a.stopped(<-errc)
			return ctx.Err()
		case <-changed:
			// New credentials: the controller starts again with them.
			cancel()
			a.stopped(<-errc)
		case err := <-errc:
			cancel()
			a.opts.Log.Error(err, "the work agent stopped; starting again", "after", retryAfter)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-changed:
			case <-a.opts.Clock.After(retryAfter):
			}
		}
	}
}

// stopped logs why a controller that was asked to stop did, unless it stopped as asked.
func (a *Agent) stopped(err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		a.opts.Log.Error(err, "the work controller stopped with an error")
	}
}

// run runs the work controller with one set of hub credentials until ctx ends.
func (a *Agent) run(ctx context.Context, hubConfig *rest.Config) error {
	cfg := rest.CopyConfig(hubConfig)
	cfg.QPS, cfg.Burst = a.opts.QPS, a.opts.Burst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Logger:                 a.opts.Log,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{a.opts.ClusterName: {}}},
		HealthProbeBindAddress: "0",
		Metrics:                metricsserver.Options{BindAddress: "0"},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	spokeCfg := rest.CopyConfig(a.opts.Spoke)
	if spokeCfg.QPS == 0 {
		spokeCfg.QPS, spokeCfg.Burst = a.opts.QPS, a.opts.Burst
	}
	spoke, err := client.New(spokeCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(spokeCfg)
	if err != nil {
		return err
	}
	ap, err := newApplier(spokeCfg, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)))
	if err != nil {
		return err
	}
	ap.defaultUser = a.opts.DefaultExecutor
	// The feedback watches read the objects works applied: as whoever applies works without an
	// executor, so that in the restricted mode the agent's identity reads none of them.
	watchAs, err := ap.client(ap.defaultUser)
	if err != nil {
		return err
	}
	events := make(chan event.GenericEvent, 1024)
	r := &Reconciler{
		Hub: mgr.GetClient(), Spoke: spoke, applier: ap,
		HubHash: cmp.Or(a.opts.HubHash, HubHash(hubConfig.Host)), AgentID: a.opts.AgentID,
		Resync: a.opts.Resync, Clock: a.opts.Clock, Log: a.opts.Log,
		feedback: newWatcher(ctx, watchAs, events),
		Fence:    a.opts.Fence, HubReader: mgr.GetAPIReader(),
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("manifestwork-agent").
		For(&workv1.ManifestWork{}, builder.WithPredicates(specChanged)).
		WatchesRawSource(source.Channel(events, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: a.opts.Workers,
			// A failed round (a hub or spoke that does not answer) is tried again after 100 ms,
			// doubling up to 30 s: an outage is caught up within 30 s of its end.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, 30*time.Second),
		}).
		Complete(r)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// specChanged ignores the agent's own writes: its status writes, and the update that adds its
// finalizer (whoever adds it, the agent that does applies the work right after). A work is applied
// again when its spec or deletion change, when its finalizers change otherwise (the agent's taken
// away: it puts it back), and at every resync.
var specChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o.GetGeneration() != n.GetGeneration() || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) {
			return true
		}
		if slices.Equal(o.GetFinalizers(), n.GetFinalizers()) {
			return false
		}
		added := !controllerutil.ContainsFinalizer(o, Finalizer) && controllerutil.ContainsFinalizer(n, Finalizer)
		return !added || len(n.GetFinalizers()) != len(o.GetFinalizers())+1
	},
}
