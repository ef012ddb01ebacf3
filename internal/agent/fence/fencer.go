package fence

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/agent/loop"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// DefaultInterval is how often the fencer looks.
const DefaultInterval = time.Second

// Agent is what the fencer reads from the registration agent.
type Agent interface {
	// LastRenewed is the RenewTime of the last renewal the hub took, by the agent's clock.
	LastRenewed() time.Time
	// Cluster is the ManagedCluster last read from the hub.
	Cluster() *clusterv1.ManagedCluster
}

// Options configures a Fencer.
type Options struct {
	ClusterName string
	Agent       Agent
	// Hub is the agent's hub credentials: the fencer reads its ManagedCluster and the cluster's
	// ManifestWorks with them and reports WorkloadsFenced.
	Hub registration.Credentials
	// Spoke reaches the cluster; its identity updates and deletes the fenced workloads.
	Spoke    *rest.Config
	Clock    clock.PassiveClock
	Log      logr.Logger
	Interval time.Duration
}

// Fencer stops the cluster's fenced workloads while the agent cannot renew its lease.
type Fencer struct {
	opts    Options
	dyn     dynamic.Interface
	kube    kubernetes.Interface
	started time.Time

	mu sync.Mutex
	// raised is the current fence; nil while none is.
	raised *episode
	// sweep asks for a look at what is stopped once the lease is fresh: after a fence, and at
	// start (a previous agent may have fenced and stopped).
	sweep bool
	// fenced mirrors raised != nil for readers outside the loop.
	fenced   atomic.Bool
	episodes atomic.Int64
}

// episode is one fence, from raised to lowered.
type episode struct {
	At time.Time
	// LastRenewed is the renewal before the outage, which the hub counts LostAfter from.
	LastRenewed time.Time
	Timing      fencing.Timing
	Epoch       int64
	Stopped     int
	// Removed counts MultiKueue's copies deleted while still cut off (removeStale).
	Removed int
	// Held is when a look first found every fenced object stopped and the pods of the suspended
	// ones going; zero until then. It is the fence's measured duration, which LostAfter must
	// cover (docs/failover.md).
	Held time.Time
	// deactivated is when the fence deactivated each Workload, by the UID of the Job or JobSet
	// that controls it: Kueue gets kueueGrace from then to stop the Job itself.
	deactivated map[types.UID]time.Time
	// unrecorded are the objects stopped whose Events are not written yet.
	unrecorded []fenced
	// spent is the time the looks of the episode spent on each step, summed.
	spent look
	// hurried are the suspended Jobs and JobSets whose pods the fence has deleted (hurryPods),
	// once an episode: a suspended Job makes no new pods.
	hurried map[types.UID]bool
}

// SpokeQPS is the least rate of the fence's client of the spoke's API server.
const SpokeQPS = 200

// New returns a fencer.
func New(opts Options) (*Fencer, error) {
	if opts.ClusterName == "" || opts.Agent == nil || opts.Hub == nil || opts.Spoke == nil {
		return nil, errors.New("the fencer needs a cluster name, the registration agent, its hub credentials and a spoke kubeconfig")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	// The fence writes in bursts, every fenced object at once, and must be done before the hub
	// declares the cluster lost: client-go's default of 5 requests a second would take minutes
	// over hundreds of jobs.
	spoke := rest.CopyConfig(opts.Spoke)
	spoke.QPS, spoke.Burst = max(spoke.QPS, SpokeQPS), max(spoke.Burst, 2*SpokeQPS)
	dyn, err := dynamic.NewForConfig(spoke)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(spoke)
	if err != nil {
		return nil, err
	}
	return newFencer(opts, dyn, kube), nil
}

func newFencer(opts Options, dyn dynamic.Interface, kube kubernetes.Interface) *Fencer {
	return &Fencer{opts: opts, dyn: dyn, kube: kube, started: opts.Clock.Now(), sweep: true}
}

// Fenced says whether the fence is raised: the work agent applies no fenced work then.
func (f *Fencer) Fenced() bool { return f.fenced.Load() }

// Episodes is how many fences were lowered: the work agent reads a fenced work from the hub
// again, past its cache, after each.
func (f *Fencer) Episodes() int64 { return f.episodes.Load() }

// Loop is the fencer as a loop of the agent, which runs it beside the registration agent's loops
// (internal/agent).
func (f *Fencer) Loop() loop.Loop {
	return loop.Loop{Name: "fence", Step: f.Step}
}

// Step looks once: raises the fence, keeps stopping while it is raised, or lowers it.
func (f *Fencer) Step(ctx context.Context) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Clock.Now()
	mc := f.opts.Agent.Cluster()
	if mc == nil {
		return f.opts.Interval, nil
	}
	last := f.opts.Agent.LastRenewed()
	if last.IsZero() {
		// Not renewed since this agent started: count from the start. The hub counts from the
		// last renewal before, which may be earlier (docs/failover.md).
		last = f.started
	}
	t, timed, _ := fencing.OfCluster(mc.Annotations)
	if f.raised == nil {
		switch {
		case timed && now.Sub(last) >= t.FenceAfter:
			f.raise(now, last, t, fencing.Epoch(mc.Annotations))
		case f.sweep && (!timed || now.Sub(last) < t.Lease*2):
			// A fresh lease (or no fencing at all): look at what an earlier fence stopped, once
			// the agent holds hub credentials.
			if f.opts.Hub.Current() == nil {
				return f.opts.Interval, nil
			}
			if err := f.lower(ctx, nil); err != nil {
				return 0, err
			}
			f.sweep = false
			return f.opts.Interval, nil
		default:
			return f.opts.Interval, nil
		}
	}
	e := f.raised
	if !last.After(e.LastRenewed) {
		// Still cut off: stop what is fenced, including what appeared since.
		lk, err := f.stopAll(ctx, e)
		e.Stopped += len(lk.stopped)
		if e.Held.IsZero() {
			e.spent.add(lk)
			if err == nil && lk.waiting == 0 {
				f.held(e, f.opts.Clock.Now())
			}
		}
		// The Events only record: until the fence holds they wait, so that writing hundreds of
		// them does not hold up the next look.
		e.unrecorded = append(e.unrecorded, lk.stopped...)
		if !e.Held.IsZero() {
			f.events(ctx, e, e.unrecorded)
			e.unrecorded = nil
		}
		if err != nil {
			return f.opts.Interval, err
		}
		// Past LostAfter and the skew bound, the hub has declared the cluster lost (if it runs):
		// MultiKueue's copies are stale, whatever comes next, and go before the link returns.
		if now.Sub(e.LastRenewed) >= e.Timing.LostAfter+fencing.ClockSkew {
			n, err := f.removeStale(ctx, e)
			e.Removed += n
			return f.opts.Interval, err
		}
		return f.opts.Interval, nil
	}
	// A renewal went through. If it came so late that the hub may be declaring the cluster lost
	// right now, wait until that is settled before reading the epoch.
	settled := e.LastRenewed.Add(e.Timing.LostAfter + fencing.ClockSkew)
	if last.After(e.LastRenewed.Add(e.Timing.LostAfter-fencing.ClockSkew)) && now.Before(settled) {
		return settled.Sub(now), nil
	}
	if err := f.lower(ctx, e); err != nil {
		return 0, err
	}
	return f.opts.Interval, nil
}

func (f *Fencer) raise(now, last time.Time, t fencing.Timing, epoch int64) {
	f.raised = &episode{At: now, LastRenewed: last, Timing: t, Epoch: epoch}
	f.fenced.Store(true)
	f.sweep = true
	f.opts.Log.Info("fence raised: the hub has not taken a lease renewal for the fence period; stopping fenced workloads",
		"cluster", f.opts.ClusterName, "lastRenewed", last.UTC().Format(time.RFC3339), "fenceAfter", t.FenceAfter.String(), "epoch", epoch)
}

// held records that the fence has stopped everything, and warns when that came later than the
// hub may start the workloads elsewhere (LostAfter less the clock-skew bound).
func (f *Fencer) held(e *episode, now time.Time) {
	e.Held = now
	took, deadline := now.Sub(e.At), e.LastRenewed.Add(e.Timing.LostAfter-fencing.ClockSkew)
	// What a slow fence spends its time on: each step over all its looks (the rest is waiting
	// for Kueue, kueueGrace, and between looks).
	steps := []any{"deactivating", e.spent.deactivate.Round(time.Millisecond).String(), "stopping", e.spent.stop.Round(time.Millisecond).String(),
		"stoppingPods", e.spent.hurry.Round(time.Millisecond).String(), "podsDeleted", e.spent.pods}
	if now.After(deadline) {
		f.opts.Log.Info("fence held too late: the hub may have started these workloads elsewhere before their pods here were told to stop; raise the cluster set's lostAfterSeconds above fenceAfterSeconds by more than this",
			append([]any{"cluster", f.opts.ClusterName, "stopped", e.Stopped, "took", took.String(), "lostAfter", e.Timing.LostAfter.String(), "fenceAfter", e.Timing.FenceAfter.String()}, steps...)...)
		return
	}
	f.opts.Log.Info("fence held: every fenced workload is stopped",
		append([]any{"cluster", f.opts.ClusterName, "stopped", e.Stopped, "took", took.String(), "spare", deadline.Sub(now).String()}, steps...)...)
}

// lower reads the epoch from the hub, resumes or removes what was stopped, reports the episode e
// (nil for a sweep at start) and lowers the fence.
func (f *Fencer) lower(ctx context.Context, e *episode) error {
	if e != nil && len(e.unrecorded) > 0 {
		f.events(ctx, e, e.unrecorded) // a fence never held
		e.unrecorded = nil
	}
	cur := f.opts.Hub.Current()
	if cur == nil {
		return errors.New("no hub credentials to read the cluster's epoch with")
	}
	live := &clusterv1.ManagedCluster{}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := cur.Client.Get(rctx, client.ObjectKey{Name: f.opts.ClusterName}, live)
	cancel()
	if err != nil {
		return fmt.Errorf("reading ManagedCluster %s for its fencing epoch: %w", f.opts.ClusterName, err)
	}
	epoch := fencing.Epoch(live.Annotations)
	fencedUnder := epoch // a sweep at start knows no fence: only recorded stops count
	if e != nil {
		fencedUnder = e.Epoch
	}
	res, err := f.resolve(ctx, cur, epoch, fencedUnder)
	if err != nil {
		return err
	}
	if e != nil {
		if err := f.report(ctx, cur, live, e, res); err != nil {
			return err
		}
		f.opts.Log.Info("fence lowered", "cluster", f.opts.ClusterName, "stopped", e.Stopped, "resumed", res.Resumed, "removed", res.Removed, "kept", res.Kept)
	}
	f.raised = nil
	f.fenced.Store(false)
	if e != nil {
		f.episodes.Add(1)
	}
	return nil
}
